"""Input generators shared by benchmarks and tests: a benchmark imports them as
``shared.<module>`` (its own folder is first on ``sys.path`` when run as a script), a test the
same way (pytest's ``pythonpath`` lists ``benchmarks``). Benchmarks never import tests.

- ``hostile_files``: office files built to exhaust a loader (zip bombs, huge sheets);
- ``sql_fuzz``: SQL queries that try to reach tables outside a warehouse dataset's scope;
- ``tatqa_tables``: TAT-QA tables as tableRef columns and rows (header rows found once).
"""
