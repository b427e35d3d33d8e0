"""The app's walls, without a browser: the session token, the CSRF token and Origin check on
state-changing requests, the Host check, the CSP, which workspaces may be opened, and the PDF
page lookup's confinement to the workspace."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient
from ui_workbench import PDF_NAME, QUOTE, scripted_workspace

from refgate.ui import UiConfig, create_app
from refgate.ui.pages import PageError, locate, pdf_of
from refgate.ui.threads import mark_blocked
from refgate.workspace import load_workspace

ORIGIN = "http://127.0.0.1:8765"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    return scripted_workspace(tmp_path_factory.mktemp("ws"))


@pytest.fixture
def client(workspace, monkeypatch):
    monkeypatch.delenv("REFGATE_ALLOWED_WORKSPACES", raising=False)
    app = create_app(UiConfig(workspaces=[workspace], port=8765))
    with TestClient(app, base_url=ORIGIN, follow_redirects=False) as c:
        c.token = app.state.ui.security.token
        yield c


def login(client) -> str:
    r = client.get(f"/?token={client.token}")
    assert r.status_code == 303 and "HttpOnly" in r.headers["set-cookie"]
    assert "samesite=strict" in r.headers["set-cookie"].lower()
    return client.get("/api/session").json()["csrf"]


def test_nothing_without_the_session_token(client):
    assert client.get("/").status_code == 401
    assert client.get("/api/session").status_code == 401
    assert client.get("/?token=wrong").status_code == 401
    assert client.post("/api/ask", json={}, headers={"origin": ORIGIN}).status_code == 401
    login(client)
    assert client.get("/").status_code == 200


def test_every_response_carries_a_csp_without_inline_script(client):
    for path in ("/", "/static/app.js", "/api/session"):
        csp = client.get(path).headers["content-security-policy"]
        assert "script-src 'self';" in csp and "unsafe" not in csp
        assert "default-src 'none'" in csp and "frame-ancestors 'none'" in csp
    assert client.get("/static/../app.py").status_code == 404


def test_a_state_changing_request_needs_the_csrf_token_and_the_apps_origin(client, workspace):
    csrf = login(client)
    body = {"workspace": str(workspace), "question": " "}
    no_token = client.post("/api/ask", json=body, headers={"origin": ORIGIN})
    assert no_token.status_code == 403 and "CSRF" in no_token.json()["error"]
    evil = client.post(
        "/api/ask", json=body, headers={"origin": "http://evil.example", "x-refgate-csrf": csrf}
    )
    assert evil.status_code == 403 and "cross-origin" in evil.json()["error"]
    no_origin = client.post("/api/ask", json=body, headers={"x-refgate-csrf": csrf})
    assert no_origin.status_code == 403
    # past both walls, the request is read (a blank question is refused, with the reason)
    ok = client.post("/api/ask", json=body, headers={"origin": ORIGIN, "x-refgate-csrf": csrf})
    assert ok.status_code == 400 and "question" in ok.json()["error"]


def test_a_foreign_host_header_is_refused(client):
    """A DNS-rebinding page reaches the server under its own name."""
    login(client)
    r = client.get("/api/session", headers={"host": "evil.example:8765"})
    assert r.status_code == 421


def test_only_given_or_allowlisted_workspaces_open(client, workspace, tmp_path, monkeypatch):
    login(client)
    other = scripted_workspace(tmp_path)
    refused = client.get("/api/workspace", params={"workspace": str(other)})
    assert refused.status_code == 403 and "was not given" in refused.json()["error"]
    assert client.get("/api/workspace", params={"workspace": str(workspace)}).status_code == 200
    monkeypatch.setenv("REFGATE_ALLOWED_WORKSPACES", str(tmp_path))
    assert client.get("/api/workspace", params={"workspace": str(other)}).status_code == 200
    outside = client.get("/api/workspace", params={"workspace": str(workspace)})
    assert outside.status_code == 403 and "REFGATE_ALLOWED_WORKSPACES" in outside.json()["error"]


def test_the_page_lookup_reads_only_pdfs_inside_the_workspace(workspace):
    ws = load_workspace(workspace)
    with pytest.raises(PageError):
        pdf_of(ws, "../../etc/passwd.pdf")
    with pytest.raises(PageError):
        pdf_of(ws, "refgate.toml")
    info = locate(pdf_of(ws, PDF_NAME), 2, "Some words first. " + QUOTE)
    assert info["found"] and info["pages"] == 2
    top = min(b["y"] for b in info["boxes"])
    assert 0.05 < top < 0.2  # the second line of the page
    with pytest.raises(PageError):
        locate(pdf_of(ws, PDF_NAME), 3, QUOTE)


def test_a_blocked_claim_is_struck_through_in_place_with_its_reasons():
    claim = "Revenue was 5,000 in 2019 [tbl_0000000001]."
    record = {
        "answer": f"Intro. {claim} Outro.",
        "unverified": [
            {"claim": claim, "code": "x", "detail": "5,000 is Cost of sales, 2019, not Revenue"},
            {"claim": claim, "code": "y", "detail": "*not* a [link](javascript:alert(1))"},
        ],
        "turns": [{"question": "q", "answer": f"Intro. {claim} Outro."}],
    }
    out = mark_blocked(record)
    assert out["answer"].startswith(f"Intro. ~~{claim}~~ _(blocked: 5,000 is Cost of sales")
    assert r"\*not\* a \[link\]\(javascript:alert\(1\)\)" in out["answer"]
    assert out["turns"] == []  # the run's own turn is not shown again as an earlier one


def test_a_research_report_shows_votes_quotes_and_cut_claims_as_text():
    from refgate.ui.threads import research_html
    from tests.support.report_runs import hostile_research_report

    html = research_html(hostile_research_report())
    assert "Verified claims" in html and "Refuted claims" in html
    assert "3 support, 0 refute" in html  # each claim's votes
    assert "<script" not in html and "<img" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # the quote, shown as text
    assert 'href="javascript:' not in html


def test_a_broken_checkpoint_file_is_an_error_the_page_can_show(client, tmp_path):
    """A corrupt store gives the page a reason in JSON, never a traceback; the list still loads."""
    ws = scripted_workspace(tmp_path)
    (ws / ".refgate").mkdir()
    (ws / ".refgate" / "checkpoints.sqlite").write_bytes(b"not a database" * 100)
    app = create_app(UiConfig(workspaces=[ws], port=8765))
    with TestClient(app, base_url=ORIGIN, follow_redirects=False) as c:
        c.token = app.state.ui.security.token
        login(c)
        listed = c.get("/api/threads", params={"workspace": str(ws)})
        assert listed.status_code == 200 and listed.json() == {"threads": []}
        opened = c.get("/api/thread", params={"workspace": str(ws), "thread": "t1"})
        assert opened.status_code == 500
        assert "DatabaseError" in opened.json()["error"] and "Traceback" not in opened.text
