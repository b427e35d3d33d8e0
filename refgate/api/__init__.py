"""The front end's Python layer: the public API and what the CLI and embedding apps share.

- ``public``: ``ask`` and ``research`` end to end (``refgate.ask`` & co. are served from here);
- ``find_workspace``: which workspace a command runs on (no silent fallback), ``refgate init``;
- ``threadlock``: one process per thread;
- ``usage``: token usage and estimated cost of a run;
- ``local_llm``: the embedded smoke-test model server.

Importing this package loads nothing else; ``public`` loads the graph stack.
"""
