"""DART (Korea's electronic disclosure system) as a source of the workspace's documents and
statement datasets, fetched through OpenDART and cached in the workspace.

``config`` reads the ``[dart]`` block of ``refgate.toml``; ``api`` speaks OpenDART's documented
endpoints (``list.json``, ``document.xml``, ``fnlttSinglAcntAll.json``, ``corpCode.xml``);
``document`` splits a filing's XML into its table-of-contents sections with tables kept as
tables; ``statements`` turns the XBRL-based statements into dataset rows; ``sync`` fetches what
is new and writes everything atomically; ``files`` holds the workspace layout.
"""
