"""Scripted chat models for offline tests and benchmarks.

``ScriptedChatModel`` answers from a list of messages in order and records every call (the
messages it saw and the tools bound), so a test can assert what each pass received. It raises
``ScriptExhausted`` instead of silently cycling back to the first response.

``KeyedChatModel`` answers by matching the prompt text against rules (safe under parallel
fan-out, where call order is not fixed).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TypeAlias

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolCall
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import ConfigDict, Field, PrivateAttr, SkipValidation
from typing_extensions import TypedDict

#: What a scripted model answers one turn with: a message, its text, or an exception to raise.
Reply: TypeAlias = BaseMessage | str | Exception
#: A scripted response: a reply, or a callable of the prompt text returning one (to cite ref
#: ids drawn during the run). Kept as given: pydantic does not validate it.
ScriptedResponse: TypeAlias = SkipValidation[Reply | Callable[[str], Reply]]
#: A ``KeyedChatModel`` rule's key: a substring of the prompt text, or a predicate on it.
RuleKey: TypeAlias = SkipValidation[str | Callable[[str], bool]]


class ScriptExhausted(RuntimeError):
    """The scripted model was called more times than it has responses."""


def tool_call(
    name: str, args: Mapping[str, object] | None = None, call_id: str | None = None
) -> ToolCall:
    """A tool call dict for ``AIMessage(tool_calls=[...])``."""
    return {
        "name": name,
        "args": dict(args or {}),
        "id": call_id or f"call_{name}_{abs(hash((name, str(args)))) % 10**8}",
        "type": "tool_call",
    }


def calls(*tool_calls: ToolCall, content: str = "") -> AIMessage:
    """An AIMessage that calls the given tools."""
    return AIMessage(content=content, tool_calls=list(tool_calls))


def _text(messages: Sequence[BaseMessage]) -> str:
    return "\n".join(m.content if isinstance(m.content, str) else str(m.content) for m in messages)


class RecordedCall(TypedDict):
    """One call a scripted model received: the messages, the tools bound, the prompt text."""

    messages: list[BaseMessage]
    tools: list[str]
    text: str


class _RecordingModel(BaseChatModel):
    """Shared recording and ``bind_tools`` support."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    latency: float = 0.0
    model_name: str = "scripted"
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _calls: list[RecordedCall] = PrivateAttr(default_factory=list)

    @property
    def calls(self) -> list[RecordedCall]:
        """Every call: ``{"messages": [...], "tools": [names], "text": prompt text}``."""
        return self._calls

    def bind_tools(self, tools: Sequence[object], **kwargs: object):  # type: ignore[override]
        names = []
        for tool in tools:
            if isinstance(tool, dict):
                names.append(tool.get("function", tool).get("name"))
            else:
                names.append(getattr(tool, "name", getattr(tool, "__name__", str(tool))))
        return self.bind(tools=list(tools), bound_tool_names=names, **kwargs)

    def _record(self, messages: list[BaseMessage], kwargs: Mapping[str, object]) -> None:
        bound = kwargs.get("bound_tool_names")  # set by ``bind_tools``: a list of names
        with self._lock:
            self._calls.append(
                {
                    "messages": list(messages),
                    "tools": list(bound) if isinstance(bound, list) else [],
                    "text": _text(messages),
                }
            )

    def _respond(self, messages: list[BaseMessage]) -> BaseMessage | Exception:
        raise NotImplementedError

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: object,
    ) -> ChatResult:
        self._record(messages, kwargs)
        if self.latency:
            time.sleep(self.latency)
        reply = self._respond(messages)
        if isinstance(reply, Exception):
            raise reply
        return ChatResult(generations=[ChatGeneration(message=reply)])

    @property
    def _llm_type(self) -> str:
        return "refgate-scripted"


class ScriptedChatModel(_RecordingModel):
    """Answers with ``responses`` in order.

    A response is a message, a string, an ``Exception`` (raised at that turn) or a callable of the
    prompt text returning one of those (to cite ref ids drawn during the run).
    """

    responses: list[ScriptedResponse] = Field(default_factory=list)
    _index: int = PrivateAttr(default=0)

    def _respond(self, messages: list[BaseMessage]) -> BaseMessage | Exception:
        with self._lock:
            if self._index >= len(self.responses):
                raise ScriptExhausted(
                    f"scripted model exhausted after {len(self.responses)} responses; "
                    f"last prompt began: {_text(messages)[:200]!r}"
                )
            reply = self.responses[self._index]
            self._index += 1
        if callable(reply) and not isinstance(reply, BaseMessage | Exception):
            reply = reply(_text(messages))
        if isinstance(reply, str):
            return AIMessage(content=reply)
        return reply

    @property
    def remaining(self) -> int:
        return len(self.responses) - self._index


class KeyedChatModel(_RecordingModel):
    """Answers by the first rule whose key occurs in the prompt text (or whose callable matches).

    ``rules`` is a list of ``(key, response)`` where ``key`` is a substring or a predicate on the
    prompt text, and ``response`` is a message, a string, an exception, or a callable of the text.
    """

    rules: list[tuple[RuleKey, ScriptedResponse]] = Field(default_factory=list)
    default: ScriptedResponse | None = None

    def _respond(self, messages: list[BaseMessage]) -> BaseMessage | Exception:
        text = _text(messages)
        for key, response in self.rules:
            hit = key(text) if callable(key) else key in text
            if hit:
                return self._materialise(response, text)
        if self.default is not None:
            return self._materialise(self.default, text)
        raise ScriptExhausted(f"no rule matches the prompt beginning {text[:300]!r}")

    @staticmethod
    def _materialise(response: ScriptedResponse, text: str) -> BaseMessage | Exception:
        if isinstance(response, Exception):
            return response
        if callable(response) and not isinstance(response, BaseMessage):
            response = response(text)
        if isinstance(response, str):
            return AIMessage(content=response)
        return response


ResponseFn = Callable[[str], BaseMessage | str | Exception]
