"""ReadSkill (placeholder until its issue lands: fails with a clear error)."""

from refgate.tools._unavailable import unavailable_spec

SPEC = unavailable_spec("ReadSkill", "ReadSkill (not available yet)", read_only=True, issues=('skillRef',))
