"""PDF reports: the self-contained HTML report printed by the installed Chromium (headless).

The page loads nothing from the network (its style and charts are inline), so printing it
needs no connection; Chromium runs with a throwaway profile in a temporary folder, and its
network features that would phone home are off.

The report carries text from untrusted sources, so the printing browser is confined beside the
page's CSP (PDF confinement). Chromium is driven over its DevTools pipe: the HTML is set into a
blank page (never opened as a ``file://`` URL) with script execution disabled, and every request
the page makes (``http``, ``file``, frames, images, fonts) is failed before it is sent; a closed
proxy stands behind that. Under bubblewrap (``bwrap``) Chromium also has no network
(``--unshare-net``) and sees only the system folders it runs from and its own temporary folder,
so even a file it were allowed to read (``/etc/hostname``, the user's home, the workspace) is not
there. Without bwrap the other barriers hold; ``REFGATE_PDF_REQUIRE_SANDBOX=1`` refuses to print
then.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from refgate.errors import RefgateError

#: Browsers tried in order (``REFGATE_CHROMIUM`` names another).
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
#: Seconds Chromium may take to print one report.
PRINT_TIMEOUT_S = 120
#: System folders Chromium runs from, visible read-only inside the confinement (when present).
SYSTEM_RO = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt")
#: Files and folders of /etc that Chromium, its launcher and fontconfig read.
ETC_RO = (
    "/etc/alternatives",
    "/etc/chromium",
    "/etc/chromium.d",
    "/etc/fonts",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/ssl",
)


class PdfError(RefgateError, RuntimeError):
    """The PDF could not be printed (no browser, or the browser failed)."""


def find_browser() -> str | None:
    """The Chromium to print with: ``REFGATE_CHROMIUM``, else the first on PATH."""
    named = os.environ.get("REFGATE_CHROMIUM")
    if named:
        return shutil.which(named) or (named if Path(named).is_file() else None)
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    return None


def confinement(folder: Path) -> list[str]:
    """The ``bwrap`` prefix that runs Chromium without network, seeing only the system folders
    and ``folder`` (its page, profile and output); [] when bubblewrap is not installed."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        if os.environ.get("REFGATE_PDF_REQUIRE_SANDBOX", "").strip() in ("1", "true", "yes"):
            raise PdfError(
                "REFGATE_PDF_REQUIRE_SANDBOX is set and bubblewrap (bwrap) is not installed "
                "(Debian/Ubuntu: apt-get install bubblewrap)"
            )
        return []
    cmd = [bwrap, "--unshare-net", "--unshare-ipc", "--unshare-pid", "--die-with-parent"]
    for path in (*SYSTEM_RO, *ETC_RO):
        if os.path.lexists(path):
            cmd += ["--ro-bind", path, path]
    cmd += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/run"]
    cmd += ["--bind", str(folder), str(folder), "--setenv", "HOME", str(folder)]
    return [*cmd, "--chdir", str(folder)]


class _DevTools:
    """A minimal Chrome DevTools Protocol client over ``--remote-debugging-pipe`` (fd 3 in,
    fd 4 out, NUL-terminated JSON)."""

    def __init__(self, to_browser: int, from_browser: int, deadline: float) -> None:
        self._out, self._in, self._deadline = to_browser, from_browser, deadline
        self._buffer = b""
        self._next_id = 0
        #: URLs the page asked for, all refused.
        self.blocked: list[str] = []

    def _read_message(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = self._deadline - time.monotonic()
            if left <= 0 or not select.select([self._in], [], [], left)[0]:
                raise TimeoutError
            chunk = os.read(self._in, 1 << 20)
            if not chunk:
                raise PdfError("Chromium closed its DevTools pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        return message

    def _send(self, method: str, session: str | None, params: dict[str, object]) -> int:
        self._next_id += 1
        request: dict[str, object] = {"id": self._next_id, "method": method, "params": params}
        if session:
            request["sessionId"] = session
        data = json.dumps(request).encode() + b"\0"
        while data:
            data = data[os.write(self._out, data) :]
        return self._next_id

    def call(self, method: str, session: str | None = None, **params: object) -> dict[str, Any]:
        """Send one command and wait for its answer. Meanwhile every request the page makes
        (``Fetch.requestPaused``) is failed; other events are dropped."""
        sent = self._send(method, session, params)
        while True:
            message = self._read_message()
            if message.get("method") == "Fetch.requestPaused":
                self.blocked.append(str(message["params"]["request"]["url"]))
                failed = {
                    "requestId": message["params"]["requestId"],
                    "errorReason": "BlockedByClient",
                }
                self._send("Fetch.failRequest", message.get("sessionId"), failed)
                continue
            if message.get("id") == sent:
                if "error" in message:
                    raise PdfError(f"Chromium refused {method}: {message['error']}")
                result: dict[str, Any] = message.get("result") or {}
                return result


def _print_inert(devtools: _DevTools, html: str) -> bytes:
    """Load ``html`` into a blank page with scripts off and every request failed, then print."""
    target = devtools.call("Target.createTarget", url="about:blank")["targetId"]
    session = devtools.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
    devtools.call("Emulation.setScriptExecutionDisabled", session, value=True)
    # every request the page would make (http, file, data of frames) is answered "blocked"
    devtools.call("Fetch.enable", session, patterns=[{"urlPattern": "*"}])
    devtools.call("Page.enable", session)
    frame = devtools.call("Page.getFrameTree", session)["frameTree"]["frame"]["id"]
    devtools.call("Page.setDocumentContent", session, frameId=frame, html=html)
    printed = devtools.call(
        "Page.printToPDF",
        session,
        printBackground=True,
        displayHeaderFooter=False,
        preferCSSPageSize=True,
    )
    return base64.b64decode(printed["data"])


def html_to_pdf(html: str, *, timeout: float = PRINT_TIMEOUT_S) -> bytes:
    """``html`` printed to PDF by headless Chromium (A4/Letter as the system sets, no header
    or footer)."""
    browser = find_browser()
    if browser is None:
        raise PdfError(
            "PDF output needs Chromium (Debian/Ubuntu: apt-get install chromium; or set "
            "REFGATE_CHROMIUM to the browser's path); .html is the same report without it"
        )
    with tempfile.TemporaryDirectory(prefix="refgate-pdf-") as tmp:
        cmd = [
            *confinement(Path(tmp)),
            browser,
            "--headless",
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-remote-fonts",
            # no request reaches the network even if one slipped past the blocked fetches
            "--proxy-server=http://127.0.0.1:9",
            "--proxy-bypass-list=<-loopback>",
            f"--user-data-dir={Path(tmp) / 'profile'}",
            "--remote-debugging-pipe",
            "about:blank",
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            # Chromium refuses to run as root with its own sandbox (bwrap confines it instead)
            cmd.insert(cmd.index(browser) + 1, "--no-sandbox")
        return _run_printer(cmd, html, timeout, browser)


def _run_printer(cmd: list[str], html: str, timeout: float, browser: str) -> bytes:
    """Start Chromium with the DevTools pipe on its fds 3 and 4, print, stop it."""
    to_child, child_in = os.pipe()[::-1]  # (write end for us, read end for it)
    child_out, from_child = os.pipe()[::-1]

    def wire_pipes() -> None:  # in the child, before exec: the pipe on fds 3 and 4
        # copies above 4 first, so neither end is overwritten by the other's dup2
        high_in = fcntl.fcntl(child_in, fcntl.F_DUPFD, 10)
        high_out = fcntl.fcntl(child_out, fcntl.F_DUPFD, 10)
        os.dup2(high_in, 3)
        os.dup2(high_out, 4)

    log = tempfile.TemporaryFile()  # noqa: SIM115 - closed below
    try:
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            pass_fds=(3, 4),
            preexec_fn=wire_pipes,  # noqa: PLW1509 - a fresh child, no threads to race
        )
    except OSError as exc:
        for fd in (to_child, child_in, child_out, from_child):
            os.close(fd)
        log.close()
        raise PdfError(f"cannot run {browser}: {exc}") from None
    os.close(child_in)
    os.close(child_out)
    try:
        devtools = _DevTools(to_child, from_child, time.monotonic() + timeout)
        try:
            pdf = _print_inert(devtools, html)
        except TimeoutError:
            raise PdfError(f"Chromium did not print the report within {timeout:.0f} s") from None
        except (OSError, ValueError, KeyError) as exc:
            log.seek(0)
            tail = " ".join(log.read().decode("utf-8", "replace").split())[-400:]
            raise PdfError(
                f"Chromium printed no PDF ({type(exc).__name__}: {exc}): {tail}"
            ) from None
        with contextlib.suppress(OSError, PdfError, TimeoutError):
            devtools.call("Browser.close")
        if not pdf:
            raise PdfError("Chromium printed an empty PDF")
        return pdf
    finally:
        for fd in (to_child, from_child):
            with contextlib.suppress(OSError):
                os.close(fd)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        log.close()
