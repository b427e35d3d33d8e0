"""``refgate eval``: measure answers end to end against gold numbers, text and refusals.

The pieces, one concept each: ``questions`` (the JSONL question file), ``scoring`` (one answer
against its gold), ``store`` (runs under ``<workspace>/.refgate/eval/``), ``runner`` (concurrent,
resumable execution of a question set through the workbench), ``compare`` (two runs side by side),
``render`` (JSON / markdown / HTML reports) and ``tatqa`` (a TAT-QA converter). It lives in the CLI
layer because scoring reads numbers with the GATE's own parser (``refgate.gate.numbers``).
"""
