"""Write the sample workspace's web snapshot index (``examples/us-macro/web/index.json``).

The snapshot holds FOMC minutes named ``MeetingDate=..._UploadedOn=...txt``; each becomes a page
with the URL the Federal Reserve Board publishes it under, a title and its release date. The
snapshot reader (``refgate.tools.web_providers.SnapshotCorpus``) reads only the index.

    python examples/us-macro/make_web_index.py [FOLDER]   # default: examples/us-macro/web
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

INDEX_FILE = "index.json"

_MINUTES_NAME = re.compile(
    r"MeetingDate=(\d{4})-(\d{2})-(\d{2})-(\d{4})-(\d{2})-(\d{2})_UploadedOn=(\d{4})(\d{2})(\d{2})"
)
_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]

#: How the Board publishes each meeting's minutes (meeting end date).
FOMC_URL = "https://www.federalreserve.gov/monetarypolicy/fomcminutes{ymd}.htm"


def fomc_minutes_index(folder: Path | str, subdir: str = "minutes") -> dict[str, Any]:
    """An ``index.json`` document for FOMC minutes named ``MeetingDate=..._UploadedOn=...txt``."""
    root = Path(folder)
    pages = []
    for path in sorted((root / subdir).glob("*.txt")):
        m = _MINUTES_NAME.search(path.name)
        if not m:
            continue
        y1, m1, d1, y2, m2, d2, uy, um, ud = m.groups()
        end = f"{y2}-{m2}-{d2}"
        if (y1, m1, d1) == (y2, m2, d2):
            when = f"{_MONTHS[int(m2) - 1]} {int(d2)}, {y2}"
        else:
            when = f"{_MONTHS[int(m1) - 1]} {int(d1)}-{_MONTHS[int(m2) - 1]} {int(d2)}, {y2}"
        pages.append(
            {
                "url": FOMC_URL.format(ymd=f"{y2}{m2}{d2}"),
                "file": f"{subdir}/{path.name}",
                "title": f"Minutes of the Federal Open Market Committee, {when}",
                "date": f"{uy}-{um}-{ud}",
                "meeting_date": end,
            }
        )
    return {
        "description": "Offline web snapshot: FOMC minutes as published by the Federal Reserve "
        "Board; 'date' is the release date, 'meeting_date' the (last) meeting day.",
        "pages": pages,
    }


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "examples/us-macro/web")
    doc = fomc_minutes_index(target)
    (target / INDEX_FILE).write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(f"{target / INDEX_FILE}: {len(doc['pages'])} pages")
