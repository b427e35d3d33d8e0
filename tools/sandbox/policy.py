"""Static checks on RunPython code before it runs: ``emit_result`` is reserved.

The sandbox (not this check) is the security boundary: imports of ``os``, ``subprocess`` or
``ctypes`` are allowed and contained by bubblewrap, rlimits and the uid drop. This check only
protects the reserved helper so that evidence always leaves through the real ``emit_result``:
code that defines, assigns, deletes, imports over, shadows (as a parameter, loop or ``except``
target, match capture), aliases or patches it is rejected before it runs. ``emit_result`` may
appear only as the callee of a call: ``emit_result(...)``. A run-time integrity check in the
sandbox catches what a static check cannot (``globals()["emit_" + "result"] = ...``).
"""

from __future__ import annotations

import ast

from refgate.errors import Refused

RESERVED = "emit_result"

#: Longest code accepted (characters).
MAX_CODE_CHARS = 200_000


class CodeRejected(Refused, ValueError):
    """The code breaks a RunPython rule; it was not run."""


def _where(node: ast.AST) -> str:
    line = getattr(node, "lineno", None)
    return f"line {line}" if line else "the code"


def _reject(node: ast.AST, what: str) -> CodeRejected:
    return CodeRejected(
        f"{_where(node)}: {what}. emit_result is reserved: call it as emit_result(table=..., "
        "values=..., units=..., date=..., sources=...); do not define, assign, delete, import, "
        "shadow or patch it."
    )


def _check_arguments(args: ast.arguments) -> str | None:
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    every += [a for a in (args.vararg, args.kwarg) if a is not None]
    for arg in every:
        if arg.arg == RESERVED:
            return "a parameter named emit_result shadows the reserved helper"
    return None


def check_code(code: str) -> ast.Module:
    """Parse ``code`` and enforce the rules; raise ``CodeRejected`` with a readable reason."""
    if not isinstance(code, str):
        raise CodeRejected(f"code must be text, got {type(code).__name__}")
    if not code.strip():
        raise CodeRejected("the code is empty")
    if len(code) > MAX_CODE_CHARS:
        raise CodeRejected(f"the code is {len(code)} characters; the limit is {MAX_CODE_CHARS}")
    if "\x00" in code:
        raise CodeRejected("the code contains a NUL character")
    try:
        tree = ast.parse(code, filename="<cell>", mode="exec")
    except SyntaxError as exc:
        text = (exc.text or "").rstrip()
        pointer = f"\n    {text}" if text else ""
        raise CodeRejected(f"syntax error at line {exc.lineno}: {exc.msg}{pointer}") from None

    callees = {
        id(node.func)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    for node in ast.walk(tree):
        if (
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and node.name == RESERVED
        ):
            raise _reject(node, f"it defines {node.name!r}")
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            problem = _check_arguments(node.args)
            if problem:
                raise _reject(node, problem)
        if isinstance(node, ast.Name) and node.id == RESERVED:
            if isinstance(node.ctx, ast.Store):
                raise _reject(node, "it assigns to emit_result")
            if isinstance(node.ctx, ast.Del):
                raise _reject(node, "it deletes emit_result")
            if id(node) not in callees:
                raise _reject(node, "it uses emit_result other than by calling it")
        if isinstance(node, (ast.Global, ast.Nonlocal)) and RESERVED in node.names:
            raise _reject(node, "it declares emit_result global/nonlocal")
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                if bound == RESERVED or alias.name == RESERVED:
                    raise _reject(node, "an import binds the name emit_result")
        if isinstance(node, ast.ExceptHandler) and node.name == RESERVED:
            raise _reject(node, "an except clause binds emit_result")
        if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name == RESERVED:
            raise _reject(node, "a match pattern binds emit_result")
        if isinstance(node, ast.MatchMapping) and node.rest == RESERVED:
            raise _reject(node, "a match pattern binds emit_result")
        if isinstance(node, ast.Attribute) and node.attr == RESERVED:
            raise _reject(node, "it reaches emit_result as an attribute")
        if isinstance(node, ast.keyword) and node.arg == RESERVED:
            raise _reject(node, "it passes emit_result as a keyword (e.g. globals().update)")
        if isinstance(node, ast.Constant) and node.value == RESERVED:
            raise _reject(node, "it names emit_result in a string (globals()/setattr tricks)")
    return tree
