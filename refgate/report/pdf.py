"""PDF reports: the self-contained HTML report printed by the installed Chromium (headless).

The page loads nothing from the network (its style, script and charts are inline), so printing
it needs no connection; Chromium runs with a throwaway profile in a temporary folder, and its
network features that would phone home are off.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

#: Browsers tried in order (``REFGATE_CHROMIUM`` names another).
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
#: Seconds Chromium may take to print one report.
PRINT_TIMEOUT_S = 120


class PdfError(RuntimeError):
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
        page = Path(tmp) / "report.html"
        out = Path(tmp) / "report.pdf"
        page.write_text(html, encoding="utf-8")
        cmd = [
            browser,
            "--headless",
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-pdf-header-footer",
            f"--user-data-dir={Path(tmp) / 'profile'}",
            f"--print-to-pdf={out}",
            page.as_uri(),
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.insert(1, "--no-sandbox")  # Chromium refuses to run as root with its sandbox
        try:
            done = subprocess.run(
                cmd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
            )
        except subprocess.TimeoutExpired:
            raise PdfError(f"Chromium did not print the report within {timeout:.0f} s") from None
        except OSError as exc:
            raise PdfError(f"cannot run {browser}: {exc}") from None
        if not out.is_file() or out.stat().st_size == 0:
            tail = " ".join((done.stderr or "").split())[-400:]
            raise PdfError(f"Chromium printed no PDF (exit {done.returncode}): {tail}")
        return out.read_bytes()
