"""read (BRIEF): read a text file, or list a folder, and issue a docRef for what was read.

- Confined: the path (relative paths resolve against the workspace root) must resolve, symlinks
  included, inside the workspace, its ``[paths] allowed_roots`` or a skills folder; the file
  actually opened is checked again (``refgate.paths.read_confined``). refgate's own state is
  refused: every ``.refgate/`` folder at any depth (a nested workspace's too), the dev server's
  ``.langgraph_api/``, and a hard link to a file of the workspace's ``.refgate/``.
- Trust follows origin: workspace files are internal (``text`` / ``entries``, never armored);
  documents and web pages (``documents/``, ``web/``, the declared documents folder and web
  snapshot) are untrusted: their text comes back under ``external_text`` (listings under
  ``external_entries``), the docRef has ``source_type="external"`` (web pages also
  ``authority="secondary"``), so the executor scans and armors it and boundary B1 applies.
- Refused, with a clear error: binary files (a NUL byte or invalid UTF-8), files over
  ``MAX_FILE_BYTES``, device and process files, and well-known secret stores (``.ssh``, ``.env``,
  key files, cloud credentials).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from pydantic import Field

from refgate.catalog.skillbook import builtin_skills_dir
from refgate.catalog.toolspec import ToolArgs, ToolContext, ToolResult, ToolSpec
from refgate.errors import InputError
from refgate.paths import PathEscape, is_within, read_confined, real
from refgate.payloads import JsonDict
from refgate.refs import SourceType

#: Largest file read at all (bytes); larger files are refused rather than sampled.
MAX_FILE_BYTES = 5 * 1024 * 1024
#: Default and largest number of characters returned per call (page with ``offset``).
DEFAULT_CHARS = 12_000
MAX_CHARS = 50_000
MAX_ENTRIES = 200
#: Where an untrusted file's text and an untrusted folder's entries land in a result, and what
#: they are (``SPEC`` declares both).
UNTRUSTED_TEXT = {
    "external_text": "the text of a workspace document or web page (documents/, web/)"
}
UNTRUSTED_ENTRIES = {"external_entries[]": "file names in a documents or web folder"}
_SECRET_DIRS = {".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".password-store"}
_SECRET_NAMES = {
    ".env",
    ".netrc",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    "credentials",
    ".git-credentials",
    "id_rsa",
    "id_ed25519",
    "id_ecdsa",
    "id_dsa",
    "shadow",
}
_SECRET_SUFFIXES = {".pem", ".key", ".p12", ".pfx", ".keystore", ".jks"}
_SYSTEM_ROOTS = ("/proc", "/sys", "/dev")
#: Folders that hold refgate's (or the dev server's) state, wherever they are.
STATE_FOLDERS = frozenset({".refgate", ".langgraph_api"})
#: Most entries of the state folder walked to find a hard link's other name.
_MAX_STATE_SCAN = 20_000


class ReadArgs(ToolArgs):
    path: str = Field(
        min_length=1,
        max_length=1000,
        description="A file or folder; relative paths are inside the workspace.",
    )
    offset: int = Field(default=0, ge=0, description="First character to return (paging).")
    max_chars: int = Field(
        default=DEFAULT_CHARS, ge=100, le=MAX_CHARS, description="Most characters returned."
    )


def _resolve(raw: str, ctx: ToolContext) -> Path:
    path = Path(raw).expanduser()
    if not path.is_absolute() and ctx.workspace is not None:
        path = ctx.workspace.root / path
    return real(path)


def _roots(ctx: ToolContext) -> list[Path]:
    """Where read may look: the workspace, its allowed_roots and skills, refgate's skills."""
    roots = [real(builtin_skills_dir())]
    if ctx.workspace is not None:
        roots[:0] = list(ctx.workspace.roots)
        if ctx.workspace.skills_path is not None:
            roots.append(ctx.workspace.skills_path)
    return roots


def _is_untrusted(path: Path, ctx: ToolContext) -> bool:
    """Documents and web pages (``documents/``, ``web/``, the declared documents folder and web
    snapshot) are text written by others: untrusted, whatever tool carries them."""
    return ctx.workspace is not None and is_within(path, ctx.workspace.untrusted_folders)


def _is_web(path: Path, ctx: ToolContext) -> bool:
    ws = ctx.workspace
    if ws is None:
        return False
    return is_within(path, [p for p in (ws.root / "web", ws.web_snapshot_path) if p is not None])


def _refusal(path: Path) -> str | None:
    text = str(path)
    if any(text == root or text.startswith(root + "/") for root in _SYSTEM_ROOTS):
        return "device, process and system files are not read"
    parts = {p.lower() for p in path.parts}
    name = path.name.lower()
    if (
        parts & _SECRET_DIRS
        or name in _SECRET_NAMES
        or name.startswith(".env.")
        or path.suffix.lower() in _SECRET_SUFFIXES
        or name.startswith("id_rsa")
    ):
        return "this looks like a secret or credential file; read refuses it"
    return None


def _is_state(path: Path, ctx: ToolContext) -> bool:
    """True for refgate's own state: a path inside any ``.refgate/`` (or ``.langgraph_api/``)
    folder at any depth, the workspace's state folder, or a hard link to a file in it."""
    if STATE_FOLDERS & set(path.parts):
        return True
    ws = ctx.workspace
    if ws is None:
        return False
    state = real(ws.state_dir)
    if is_within(path, [state]):
        return True
    try:
        info = path.stat()
    except OSError:
        return False
    if not path.is_file() or info.st_nlink < 2 or not state.is_dir():
        return False
    for seen, entry in enumerate(state.rglob("*")):
        if seen >= _MAX_STATE_SCAN:
            return True  # cannot tell: refuse on the safe side
        try:
            other = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if (other.st_dev, other.st_ino) == (info.st_dev, info.st_ino):
            return True
    return False


def _shown(path: Path, ctx: ToolContext) -> str:
    if ctx.workspace is not None and ctx.workspace.contains(path):
        return str(path.relative_to(ctx.workspace.root)) or "."
    return str(path)


class _ReadFailed(InputError):
    """The path cannot be read (refused, missing, too large, not text); the message is the
    failure the model sees."""


def _check_reachable(args: ReadArgs, path: Path, roots: list[Path], ctx: ToolContext) -> None:
    """Refuse a path outside the roots, in refgate's state, secret, or missing."""
    if not is_within(path, roots):
        where = (
            "the workspace, its [paths] allowed_roots and the skills folders"
            if ctx.workspace is not None
            else "the skills folders (no workspace is loaded)"
        )
        raise _ReadFailed(f"read refused {args.path!r}: it is outside {where}")
    if _is_state(path, ctx):
        raise _ReadFailed(
            f"read refused {args.path!r}: .refgate/ folders (at any depth) hold refgate's own "
            "state (checkpoints, memory, audit), not workspace material"
        )
    refusal = _refusal(path)
    if refusal:
        raise _ReadFailed(f"read refused {args.path!r}: {refusal}")
    if not path.exists():
        where = f" (relative paths resolve against {ctx.workspace.root})" if ctx.workspace else ""
        raise _ReadFailed(f"no such file or folder: {args.path!r}{where}")


def _list_folder(path: Path, shown: str, source_type: SourceType, untrusted: bool) -> ToolResult:
    """A folder's entries (names of untrusted folders are untrusted data)."""
    entries = []
    for child in sorted(path.iterdir())[:MAX_ENTRIES]:
        entries.append(child.name + ("/" if child.is_dir() else ""))
    data: JsonDict = {
        "path": shown,
        "kind": "folder",
        "source_type": source_type,
        ("external_entries" if untrusted else "entries"): entries,
        "truncated": len(entries) >= MAX_ENTRIES,
    }
    return ToolResult(
        ok=True,
        data=data,
        untrusted_fields=list(UNTRUSTED_ENTRIES) if untrusted else [],
        untrusted_content=untrusted,
    )


def _file_text(args: ReadArgs, path: Path, roots: list[Path]) -> tuple[bytes, str]:
    """A regular file's bytes and its UTF-8 text, within the size limit."""
    if not path.is_file():
        raise _ReadFailed(f"{args.path!r} is not a regular file")
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise _ReadFailed(
            f"{args.path!r} is {size:,} bytes, over read's limit of {MAX_FILE_BYTES:,}; "
            "for a dataset use InspectDataset in WORK, for documents the search_documents "
            "capability"
        )
    try:
        # Checked again on the descriptor actually opened (no symlink swap after the check).
        raw = read_confined(path, roots, limit=MAX_FILE_BYTES + 1, what="read")
    except PathEscape as exc:
        raise _ReadFailed(f"read refused {args.path!r}: {exc}") from None
    except OSError as exc:
        raise _ReadFailed(f"cannot read {args.path!r}: {exc.strerror or exc}") from None
    if b"\x00" in raw[:8192]:
        raise _ReadFailed(f"{args.path!r} is a binary file; read returns text only")
    try:
        return raw, raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _ReadFailed(
            f"{args.path!r} is not UTF-8 text ({exc.reason} at byte "
            f"{exc.start}); read returns text only"
        ) from None


def _read_file(
    args: ReadArgs, path: Path, shown: str, untrusted: bool, raw: bytes, text: str, ctx: ToolContext
) -> ToolResult:
    """One page of a file's text, with the docRef that cites it."""
    source_type: SourceType = "external" if untrusted else "internal"
    chunk = text[args.offset : args.offset + args.max_chars]
    truncated = args.offset + len(chunk) < len(text)
    sha = hashlib.sha256(raw).hexdigest()
    payload = {
        "doc_id": shown,
        "path": shown,
        "excerpt": chunk,
        "offset": args.offset,
        "chars": len(text),
        "sha256": sha,
        "truncated": truncated,
    }
    ref = ctx.issue(
        "docRef",
        payload,
        title=f"file {shown}"[:120],
        source=str(path),
        source_type=source_type,
        authority="secondary" if _is_web(path, ctx) else None,
    )
    data: JsonDict = {
        "path": shown,
        "kind": "file",
        "source_type": source_type,
        "chars": len(text),
        "offset": args.offset,
        "truncated": truncated,
        "next_offset": args.offset + len(chunk) if truncated else None,
        ("external_text" if untrusted else "text"): chunk,
    }
    return ToolResult(
        ok=True, data=data, refs=[ref], untrusted_fields=list(UNTRUSTED_TEXT) if untrusted else []
    )


def read_path(args: ReadArgs, ctx: ToolContext) -> ToolResult:
    path = _resolve(args.path, ctx)
    roots = _roots(ctx)
    try:
        _check_reachable(args, path, roots, ctx)
        untrusted = _is_untrusted(path, ctx)
        shown = _shown(path, ctx)
        if path.is_dir():
            source_type: SourceType = "external" if untrusted else "internal"
            return _list_folder(path, shown, source_type, untrusted)
        raw, text = _file_text(args, path, roots)
    except _ReadFailed as exc:
        return ToolResult.failure(str(exc))
    return _read_file(args, path, shown, untrusted, raw, text, ctx)


SPEC = ToolSpec(
    name="read",
    description=(
        "Read a text file (or list a folder) of the workspace, e.g. a dataset's notes or "
        "sources file, or a skill file. Only the workspace (and folders its refgate.toml lists "
        "as allowed_roots) can be read; documents and web pages come back as untrusted data. "
        "Issues a docRef for a file."
    ),
    args_schema=ReadArgs,
    func=read_path,
    read_only=True,
    issues=("docRef",),
    untrusted_fields={**UNTRUSTED_TEXT, **UNTRUSTED_ENTRIES},
)
