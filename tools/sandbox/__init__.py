"""RunPython's sandbox: ``host`` (warm workers under bubblewrap or rlimits-only), ``worker``
(the package that runs inside: the template that forks one isolated child per call), ``policy`` (the
``emit_result`` reservation check) and ``emit`` (host-side validation of emitted results)."""
