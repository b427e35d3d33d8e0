"""refgate's exception tree: one root, a few branches that say what went wrong, and the exit
code each means, mapped here once.

Every error refgate raises on purpose derives from ``RefgateError`` through one branch; each
concrete error also keeps the built-in base it always had (``ValueError``, ``RuntimeError``,
``PermissionError``), so existing ``except`` clauses still hold. The CLI exits with
``exit_code_for(exc)``:

- ``SettingsError`` (2): a setting, a configuration file or an option is wrong;
- ``WorkspaceError`` (2): the workspace is missing or invalid;
- ``InputError`` (2): input from a user, a file, a document or a server is malformed or too big;
- ``Refused`` (2): a rule refused the action (a path outside the workspace, a query, a thread
  of another workspace);
- ``ModelError`` (1): a model, its files or its server cannot be used;
- ``RefgateError`` itself (1): anything else that stopped the work (a sandbox, a search
  provider, an index, an OpenDART answer).
"""

from __future__ import annotations

from typing import ClassVar

#: Exit codes of the CLI (``refgate ask`` also exits 3 when the GATE leaves claims unmet).
EXIT_OK = 0
EXIT_ERROR = 1
EXIT_CONFIG = 2
EXIT_UNMET = 3


class RefgateError(Exception):
    """The root of every error refgate raises on purpose."""

    exit_code: ClassVar[int] = EXIT_ERROR


class SettingsError(RefgateError):
    """A setting, a configuration file or an option is wrong (the message names where)."""

    exit_code: ClassVar[int] = EXIT_CONFIG


class WorkspaceError(RefgateError, ValueError):
    """The workspace is missing or malformed (the message names the folder, file and field)."""

    exit_code: ClassVar[int] = EXIT_CONFIG


class InputError(RefgateError):
    """Input from a user, a file, a document or a server is malformed or over a bound."""

    exit_code: ClassVar[int] = EXIT_CONFIG


class Refused(RefgateError):
    """A rule refused the action: nothing was done."""

    exit_code: ClassVar[int] = EXIT_CONFIG


class ModelError(RefgateError):
    """A model, its files or its server cannot be used."""

    exit_code: ClassVar[int] = EXIT_ERROR


def exit_code_for(exc: BaseException) -> int:
    """The CLI's exit code for ``exc``: its branch's, else 1."""
    return exc.exit_code if isinstance(exc, RefgateError) else EXIT_ERROR
