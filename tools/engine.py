"""Moved to ``refgate.engine``; this alias keeps old imports working (the same module object)."""

import sys

import refgate.engine as _moved

sys.modules[__name__] = _moved
