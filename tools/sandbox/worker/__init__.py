"""The sandbox worker package: runs INSIDE the sandbox (see ``template``). Standard library only
at import time, with relative imports, so it loads both as ``refgate.tools.sandbox.worker`` on the
host and as the top-level package the sandbox binds read-only. Modules: ``protocol`` (framing and
the channel seal, shared with the host), ``limits`` (rlimits, prctl, the sweep of leftover
processes), ``state``, ``data`` (``datasets[...]``), ``prelude`` (``emit_result``, ``engine``),
``cell`` (one call's run) and ``template`` (the warm template and its main loop)."""
