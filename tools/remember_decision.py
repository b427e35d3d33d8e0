"""RememberDecision (placeholder until its issue lands: fails with a clear error)."""

from refgate.tools._unavailable import unavailable_spec

SPEC = unavailable_spec("RememberDecision", "RememberDecision (not available yet)", read_only=False, issues=('decisionRef',))
