"""refgate: an evidence-gated analyst agent on LangGraph."""

from refgate.refs import Ref, new_ref_id

__all__ = ["Ref", "new_ref_id"]
__version__ = "0.1.0"
