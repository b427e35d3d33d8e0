"""Moved to ``refgate.toolspec``; this alias keeps old imports working (the same module object)."""

import sys

import refgate.toolspec as _moved

sys.modules[__name__] = _moved
