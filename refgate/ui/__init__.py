"""``refgate ui``: the workbench in the browser (ask, watch the passes, click a number to see
its evidence).

A Starlette app over refgate's own public API (``refgate.api.public.ask`` and its progress
events, relayed as server-sent events), the HTML report's renderer and evidence cards
(``refgate.report``), and plain JavaScript served from ``static/`` (no CDN, no build step).

- ``app``: the routes and ``create_app``;
- ``security``: the session token, the per-browser CSRF token, the Origin/Host checks, the CSP;
- ``runs``: runs in worker threads, their events, stop and resume;
- ``threads``: past threads from the audit record and the checkpoints, rendered for the page;
- ``places``: which workspaces may be opened, and what each holds;
- ``pages``: a PDF page as an image, with the boxes of a quoted sentence.
"""

from refgate.ui.app import UiConfig, create_app

__all__ = ["UiConfig", "create_app"]
