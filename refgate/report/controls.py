"""Control characters made visible: nothing refgate writes for a person (the terminal, a markdown
report) can clear a screen, set a title or hide text (ESC, OSC, BEL, C1 CSI).

C0 controls but newline and tab, DEL and C1 controls become their Unicode control pictures
(``\\x1b`` -> "␛", DEL -> "␡") or, for C1, the four characters ``\\x9b``.
"""

from __future__ import annotations

import re

#: C0 controls but newline and tab, DEL, and C1 controls: a terminal acts on them (clear the
#: screen, set the title, move the cursor), so text from a model or a file never carries them out.
CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # the Unicode control picture: ESC -> "␛"
    if code == 0x7F:
        return "\u2421"  # ␡
    return f"\\x{code:02x}"


def visible_controls(text: str) -> str:
    r"""``text`` with every control character but newline and tab made visible."""
    return CONTROLS.sub(_visible, text)
