"""emit_result is reserved: the static check rejects every way of rebinding or patching it."""

import pytest

from refgate.tools.sandbox.policy import CodeRejected, check_code

REJECTED = [
    "def emit_result(**kw):\n    pass",
    "async def emit_result():\n    pass",
    "class emit_result:\n    pass",
    "emit_result = print",
    "emit_result: object = None",
    "emit_result += 1",
    "del emit_result",
    "(emit_result := 3)",
    "for emit_result in range(3):\n    pass",
    "with open('x') as emit_result:\n    pass",
    "import json as emit_result",
    "from os import path as emit_result",
    "from mymodule import emit_result",
    "import emit_result",
    "try:\n    pass\nexcept Exception as emit_result:\n    pass",
    "def f(emit_result):\n    return emit_result",
    "def f(*, emit_result=None):\n    pass",
    "def f(**emit_result):\n    pass",
    "g = lambda emit_result: 1",
    "[1 for emit_result in range(2)]",
    "def f():\n    global emit_result\n    emit_result = 1",
    "f = emit_result",
    "print(emit_result)",
    "emit_result.__code__ = (lambda: 0).__code__",
    "emit_result.__kwdefaults__['units'] = 'USD'",
    "import builtins\nbuiltins.emit_result = print",
    "import sys\nsys.modules['__main__'].emit_result = print",
    "globals()['emit_result'] = print",
    "globals().update(emit_result=print)",
    "setattr(__builtins__, 'emit_result', print)",
    "vars()['emit_result'] = 1",
    "match 1:\n    case emit_result:\n        pass",
    "match [1]:\n    case [*emit_result]:\n        pass",
    "match {}:\n    case {**emit_result}:\n        pass",
]


@pytest.mark.parametrize("code", REJECTED)
def test_rebinding_or_patching_emit_result_is_rejected(code):
    with pytest.raises(CodeRejected) as err:
        check_code(code)
    message = str(err.value)
    assert "emit_result is reserved" in message
    assert "line" in message


ALLOWED = [
    "emit_result(values={'x': 1.0}, units='USD')",
    "x = 1\nemit_result(table=pd.DataFrame({'a': [1, 2]}))",
    "print('call emit_result(...) to report')",  # mentioning it in a longer string is fine
    "def helper(df):\n    emit_result(table=df)\nhelper(pd.DataFrame({'a': [1]}))",
    "import os, subprocess, ctypes",  # the sandbox contains these; no deny-list
    "emit_results = 3",  # a different name
]


@pytest.mark.parametrize("code", ALLOWED)
def test_ordinary_code_passes(code):
    check_code(code)


@pytest.mark.parametrize(
    ("code", "fragment"),
    [
        ("", "empty"),
        ("   \n", "empty"),
        ("x = (", "syntax error at line 1"),
        ("a\x00b", "NUL"),
        ("x" * 200_001, "limit"),
    ],
)
def test_bad_code_gets_a_clear_reason(code, fragment):
    with pytest.raises(CodeRejected, match=fragment):
        check_code(code)


def test_non_text_code_is_rejected():
    with pytest.raises(CodeRejected, match="must be text"):
        check_code(b"print(1)")  # type: ignore[arg-type]
