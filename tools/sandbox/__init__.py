"""RunPython's sandbox: ``host`` (warm workers under bubblewrap or rlimits-only, and their pool),
``confine`` (the bubblewrap command line), ``mounts`` (the datasets a call sees), ``limits``
(per-call rlimits and uids), ``call`` (one call's channel, output and result), ``errors``,
``worker`` (the package that runs inside: the template that forks one isolated child per call),
``policy`` (the ``emit_result`` reservation check) and ``emit`` (host-side validation of emitted
results)."""
