"""Moved to ``refgate.embeddings``; this alias keeps old imports working (the same module object)."""

import sys

import refgate.embeddings as _moved

sys.modules[__name__] = _moved
