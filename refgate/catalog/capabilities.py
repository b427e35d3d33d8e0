"""The engine capability catalog: plain Python functions with docstrings.

Capabilities are the callable API of a workspace. The same functions are reached three ways:
``EngineCall`` (WORK tool, by name with JSON arguments), ``engine.<name>`` inside RunPython, and
``ReadCapability`` (BRIEF), which reads the catalog generated from their signatures and
docstrings. The docstrings are the API's single source of truth.

This module is the core's half (the contract and the catalog); the capabilities themselves live
in the layer they need (``refgate.tools.capabilities``: datasets; ``refgate.retrieval.capability``:
documents; ``refgate.graph.research_capability``: deep research), each module ending with the
list of its capabilities (``CAPABILITIES``). They are registered explicitly, never by importing a
module: ``@capability`` only marks and checks a function; ``register(CAPABILITIES)`` enters a
list into the catalog. The graph layer, which sees every layer, names all the lists in one place
(``refgate.graph.capabilities.DEFAULT_CAPABILITIES``) and ``build_graph`` registers them with one
call. A capability receives its
JSON arguments plus the keyword-only ``env: EngineEnv`` and returns ``Evidence`` (data for the
caller plus ref specs; ids are drawn by the caller's ledger) or plain JSON-able data.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from refgate.config import Settings
    from refgate.workspace import Workspace


@dataclass
class EngineEnv:
    """What a capability may use: the workspace and the settings."""

    workspace: Workspace | None = None
    settings: Settings | None = None
    extra: dict[str, object] = field(default_factory=dict)


@dataclass
class RefSpec:
    """A ref to issue, minus its id (the caller's ledger draws it)."""

    kind: str
    payload: Mapping[str, object]
    title: str = ""
    source: str = ""
    source_type: str = "internal"
    #: Payload keys (dotted for nested) identifying the evidence: a ref of the same kind already
    #: in the run's ledger that agrees on them is reused, not issued again.
    same_as: tuple[str, ...] = ()


@dataclass
class Evidence:
    """A capability's result: JSON-able ``data`` and the refs it backs."""

    data: Any
    refs: list[RefSpec] = field(default_factory=list)
    untrusted_fields: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Capability:
    name: str
    func: Callable[..., object]
    signature: str
    doc: str

    def describe(self) -> dict[str, str]:
        return {"name": self.name, "signature": self.signature, "doc": self.doc}


_CATALOG: dict[str, Capability] = {}


#: The attribute ``@capability`` sets on the functions it marks.
MARK = "__engine_capability__"


def _describe(func: Callable[..., object]) -> Capability:
    doc = inspect.getdoc(func)
    if not doc:
        raise ValueError(f"capability {func.__name__} needs a docstring (it is the API's doc)")
    sig = inspect.signature(func, eval_str=True)
    params = [p for p in sig.parameters.values() if p.name != "env"]
    shown = sig.replace(parameters=params)
    return Capability(func.__name__, func, f"{func.__name__}{shown}", doc)


#: A function marked as a capability keeps its own type.
CapabilityFunc = TypeVar("CapabilityFunc", bound=Callable[..., object])


def capability(func: CapabilityFunc) -> CapabilityFunc:
    """Mark ``func`` as an engine capability (its docstring is checked now); it enters the
    catalog when its layer's list is registered (``register``), not when it is defined."""
    _describe(func)
    setattr(func, MARK, True)
    return func


def register(funcs: Iterable[Callable[..., object]]) -> None:
    """Enter a layer's list of capabilities (each marked ``@capability``) into the catalog under
    their own names; registering the same list again changes nothing."""
    for func in funcs:
        if not getattr(func, MARK, False):
            raise TypeError(f"{func.__name__} is not marked @capability")
        known = _CATALOG.get(func.__name__)
        if known is not None and known.func is not func:
            raise ValueError(f"two capabilities are named {func.__name__!r}")
        _CATALOG[func.__name__] = _describe(func)


def catalog() -> dict[str, Capability]:
    """All registered capabilities by name (the lists the layers loaded so far registered)."""
    return dict(_CATALOG)


def get_capability(name: str) -> Capability:
    caps = catalog()
    if name not in caps:
        known = ", ".join(sorted(caps)) or "none"
        raise KeyError(f"unknown capability {name!r}; known: {known}")
    return caps[name]
