"""read (BRIEF): read a text file, or list a folder, and issue a docRef for what was read.

- A path inside the workspace (or refgate's own skills folder) is internal: its text reaches the
  model as is. Relative paths resolve against the workspace root.
- Anything outside is external: its text comes back under ``external_text`` (folder listings
  under ``external_entries``), paths the spec declares untrusted, and the docRef has
  ``source_type="external"``, so the executor armors it and boundary B1 applies. Internal text
  comes back under ``text`` / ``entries``, which are never armored.
- Refused, with a clear error: binary files (a NUL byte or invalid UTF-8), files over
  ``MAX_FILE_BYTES``, device and process files, and well-known secret stores (``.ssh``, ``.env``,
  key files, cloud credentials).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from refgate.tools.base import ToolContext, ToolResult, ToolSpec

#: Largest file read at all (bytes); larger files are refused rather than sampled.
MAX_FILE_BYTES = 5 * 1024 * 1024
#: Default and largest number of characters returned per call (page with ``offset``).
DEFAULT_CHARS = 12_000
MAX_CHARS = 50_000
MAX_ENTRIES = 200
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


class ReadArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

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
    return path.resolve()


def _is_internal(path: Path, ctx: ToolContext) -> bool:
    if ctx.workspace is not None and ctx.workspace.contains(path):
        return True
    from refgate.skillbook import builtin_skills_dir

    try:
        path.relative_to(builtin_skills_dir().resolve())
    except ValueError:
        return False
    return True


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


def read_path(args: ReadArgs, ctx: ToolContext) -> ToolResult:
    path = _resolve(args.path, ctx)
    refusal = _refusal(path)
    if refusal:
        return ToolResult.failure(f"read refused {args.path!r}: {refusal}")
    if not path.exists():
        where = f" (relative paths resolve against {ctx.workspace.root})" if ctx.workspace else ""
        return ToolResult.failure(f"no such file or folder: {args.path!r}{where}")
    internal = _is_internal(path, ctx)
    source_type = "internal" if internal else "external"
    shown = (
        str(path.relative_to(ctx.workspace.root.resolve()))
        if ctx.workspace is not None and ctx.workspace.contains(path)
        else str(path)
    )
    if path.is_dir():
        entries = []
        for child in sorted(path.iterdir())[:MAX_ENTRIES]:
            entries.append(child.name + ("/" if child.is_dir() else ""))
        data = {
            "path": shown,
            "kind": "folder",
            "source_type": source_type,
            ("entries" if internal else "external_entries"): entries,
            "truncated": len(entries) >= MAX_ENTRIES,
        }
        return ToolResult(
            ok=True,
            data=data,
            untrusted_fields=[] if internal else ["external_entries[]"],
            untrusted_content=not internal,
        )
    if not path.is_file():
        return ToolResult.failure(f"{args.path!r} is not a regular file")
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        return ToolResult.failure(
            f"{args.path!r} is {size:,} bytes, over read's limit of {MAX_FILE_BYTES:,}; "
            "for a dataset use InspectDataset in WORK, for documents the search_documents "
            "capability"
        )
    raw = path.read_bytes()
    if b"\x00" in raw[:8192]:
        return ToolResult.failure(f"{args.path!r} is a binary file; read returns text only")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return ToolResult.failure(
            f"{args.path!r} is not UTF-8 text ({exc.reason} at byte "
            f"{exc.start}); read returns text only"
        )
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
        "docRef", payload, title=f"file {shown}"[:120], source=str(path), source_type=source_type
    )
    data = {
        "path": shown,
        "kind": "file",
        "source_type": source_type,
        "chars": len(text),
        "offset": args.offset,
        "truncated": truncated,
        "next_offset": args.offset + len(chunk) if truncated else None,
        ("text" if internal else "external_text"): chunk,
    }
    return ToolResult(
        ok=True, data=data, refs=[ref], untrusted_fields=[] if internal else ["external_text"]
    )


SPEC = ToolSpec(
    name="read",
    description=(
        "Read a text file (or list a folder) of the workspace, e.g. a dataset's notes or "
        "sources file. Files outside the workspace are external and returned as untrusted "
        "data. Issues a docRef for a file."
    ),
    args_schema=ReadArgs,
    func=read_path,
    read_only=True,
    issues=("docRef",),
    untrusted_fields={
        "external_text": "the text of a file outside the workspace",
        "external_entries[]": "file names in a folder outside the workspace",
    },
)
