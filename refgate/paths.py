"""Confinement: every path refgate opens on the user's behalf resolves inside allowed roots.

The roots of a workspace are its folder and the folders its ``refgate.toml`` lists under
``[paths] allowed_roots`` (none by default). A path is judged by its *real* path (symlinks and
``..`` resolved), and judged again when it is opened or mounted, so a file swapped for a symlink
after the workspace was loaded is refused rather than followed.

``REFGATE_ALLOWED_WORKSPACES`` (``os.pathsep``-separated folders) bounds what a served graph's
client may name as a workspace; ``served_allowlist`` parses it and fails closed when it is set
but has no usable entry.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from refgate.errors import Refused

ALLOWLIST_ENV = "REFGATE_ALLOWED_WORKSPACES"


class PathEscape(Refused, PermissionError):
    """A path resolves outside the roots it must stay in (the message names it and the roots)."""


class ServedRefusal(PathEscape, ValueError):
    """A folder a served graph (or MCP tool) may not use under ``REFGATE_ALLOWED_WORKSPACES``.

    Still a ``PathEscape`` for refgate's own handlers, and a ``ValueError`` so that LangGraph
    Server hands the client its type and message rather than "An internal error occurred" (it
    shows those only for ``ValueError`` and a few other built-in types)."""


def real(path: Path | str) -> Path:
    """The real path of ``path`` (``~`` expanded, symlinks and ``..`` resolved)."""
    return Path(os.path.realpath(Path(path).expanduser()))


def is_within(path: Path | str, roots: Iterable[Path | str]) -> bool:
    """True when the real path of ``path`` is one of ``roots`` or lies beneath one."""
    target = real(path)
    for root in roots:
        base = real(root)
        if target == base or base in target.parents:
            return True
    return False


def _roots_text(roots: Iterable[Path | str]) -> str:
    return ", ".join(str(r) for r in roots) or "none"


def confine(path: Path | str, roots: Iterable[Path | str], *, what: str = "path") -> Path:
    """The real path of ``path``; ``PathEscape`` when it lies outside every root."""
    roots = list(roots)
    target = real(path)
    if not is_within(target, roots):
        shown = f"{path} (real path {target})" if str(target) != str(path) else str(path)
        raise PathEscape(f"{what}: {shown} is outside the allowed roots ({_roots_text(roots)})")
    return target


def recheck(path: Path | str, *, what: str = "path") -> Path:
    """Re-resolve a path stored as a real path at load time; ``PathEscape`` when it changed
    (a file or folder on the way was replaced by a symlink since)."""
    target = real(path)
    if str(target) != str(path):
        raise PathEscape(
            f"{what}: {path} now resolves to {target}; it changed since the workspace was "
            "loaded (a symlink swap?) and is not opened"
        )
    return target


def open_confined(path: Path | str, roots: Iterable[Path | str], *, what: str = "path") -> int:
    """Open ``path`` read-only and return the descriptor, after checking the file actually opened
    lies inside ``roots`` (read back from ``/proc/self/fd``: no window for a symlink swap)."""
    roots = list(roots)
    confine(path, roots, what=what)
    fd = os.open(real(path), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        opened = Path(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:  # no /proc: the check before opening stands
        return fd
    if not is_within(opened, roots):
        os.close(fd)
        raise PathEscape(f"{what}: {path} opened as {opened}, outside the allowed roots")
    return fd


def read_confined(
    path: Path | str, roots: Iterable[Path | str], *, limit: int, what: str = "path"
) -> bytes:
    """At most ``limit`` bytes of ``path``, opened through ``open_confined``."""
    fd = open_confined(path, roots, what=what)
    with os.fdopen(fd, "rb") as fh:
        return fh.read(limit)


def served_allowlist(env: Mapping[str, str] | None = None) -> list[Path] | None:
    """The folders of ``REFGATE_ALLOWED_WORKSPACES`` (real paths), or None when it is unset.

    Entries must be absolute paths of existing folders; others are skipped. A variable that is
    set but leaves no usable entry (``":"``, only relative or missing folders) raises
    ``PathEscape``: the server refuses every workspace rather than allowing all.
    """
    env = os.environ if env is None else env
    raw = env.get(ALLOWLIST_ENV)
    if raw is None:
        return None
    usable = []
    for entry in raw.split(os.pathsep):
        entry = entry.strip()
        if not entry:
            continue
        p = Path(entry).expanduser()
        if p.is_absolute() and p.is_dir():
            usable.append(real(p))
    if not usable:
        raise ServedRefusal(
            f"{ALLOWLIST_ENV}={raw!r} has no usable entry (absolute paths of existing folders, "
            f"separated by {os.pathsep!r}); every workspace is refused"
        )
    return usable


def check_served(path: Path | str, allowlist: list[Path] | None, *, what: str) -> None:
    """``PathEscape`` when an allowlist is in force and ``path`` is outside it."""
    if allowlist is not None and not is_within(path, allowlist):
        raise ServedRefusal(
            f"{what} {real(path)} is outside {ALLOWLIST_ENV} ({_roots_text(allowlist)})"
        )
