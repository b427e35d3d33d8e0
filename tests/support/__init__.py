"""Helpers the tests share, imported as ``tests.support.<module>`` (pytest puts the repository
root on ``sys.path``: ``pythonpath`` in pyproject.toml; no test edits ``sys.path``).

- ``evidence``: the scripted RunPython double (``evidence_spec``, ``CodeArgs``) and replies that
  cite the ids a prompt shows (``cite_first``, ``citing``, ``ids_in``);
- ``serving``: the scripted model and HTTP stub of the served-graph tests, workspaces for them;
- ``sandbox``: the sample workspace and settings of the sandbox tests;
- ``report_runs``: finished runs (refs, GATE reports) the report tests render;
- ``dart``, ``dart_sample``: the recording served by the local fake of OpenDART
  (``benchmarks/shared/fake_opendart.py``) and workspaces for it;
- ``korean_claims``, ``corpus``, ``docfiles``: test material read from the repository;
- ``scripts``: ``load_script`` loads a script of ``scripts/`` or ``benchmarks/`` by its path.

Helpers a benchmark needs too live in ``benchmarks/shared/`` (benchmarks never import tests).
"""
