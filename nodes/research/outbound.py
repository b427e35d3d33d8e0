"""What the research graph sends off the machine: every search query and every fetched URL
passes the outbound policy (``refgate.tools.outbound``) and is recorded as sent.

Each node that sends wraps its providers in ``Sending``: a query written by the model in a
step whose prompt held untrusted text (``written_after_untrusted``: scope's prompt holds only
the question; a step that saw a page would hold a fence) may only carry words the person or
code wrote (B1 for outbound); in every step a query carrying the calling run's workspace data
is refused unless ``outbound_workspace_data`` allows it. A refused query is not sent: the
provider sees nothing, the refusal is kept for the report. URLs are fetched only when a search
of the run returned them (B2, checked by the steps); each fetch is recorded.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from langchain_core.runnables import RunnableConfig
from typing_extensions import TypedDict

from refgate.nodes.research.deps import ResearchDeps, run_web
from refgate.nodes.research.state import Refusal
from refgate.provenance.armor import without_fences
from refgate.provenance.record import sent_entry
from refgate.tools.outbound import (
    RESEARCH_FETCH,
    RESEARCH_SEARCH,
    OutboundPolicy,
    check_outbound_text,
)
from refgate.tools.web_providers import Fetch, Page, SearchHit, WebSearch

#: The tool name the research graph's sends are recorded under.
TOOL = "deep_research"


def policy_of(deps: ResearchDeps) -> OutboundPolicy:
    """The graph's policy (given by the run that started it), else the settings' default."""
    if deps.outbound is not None:
        return deps.outbound
    settings = deps.settings
    return OutboundPolicy(
        allow_data=bool(settings is not None and settings.outbound_workspace_data)
    )


class SendingUpdate(TypedDict, total=False):
    """The ``sent`` and ``refused`` channels a research step appends to."""

    sent: list[dict[str, str]]
    refused: list[Refusal]


#: A research step's update that has the ``sent`` and ``refused`` channels.
StepUpdate = TypeVar("StepUpdate", bound=SendingUpdate)


class Sending:
    """A node's search and fetch providers, checked and recorded (``sent``, ``refused``)."""

    def __init__(
        self,
        searcher: WebSearch | None,
        fetcher: Fetch | None,
        *,
        question: str,
        policy: OutboundPolicy,
        written_after_untrusted: bool = False,
        code_words: Iterable[str] = (),
    ) -> None:
        self._searcher = searcher
        self._fetcher = fetcher
        # the person's words: the question outside any fence it holds, and code's words
        self._trusted = [without_fences(question), *code_words, *policy.trusted]
        self._policy = policy
        self._untrusted = written_after_untrusted
        self.sent: list[dict[str, str]] = []
        self.refused: list[Refusal] = []

    @classmethod
    def for_run(
        cls,
        deps: ResearchDeps,
        config: RunnableConfig,
        question: str,
        *,
        written_after_untrusted: bool = False,
        code_words: Iterable[str] = (),
    ) -> Sending:
        """The run's web providers (``run_web``) behind the run's outbound policy."""
        search, fetch = run_web(deps, config)
        return cls(
            search,
            fetch,
            question=question,
            policy=policy_of(deps),
            written_after_untrusted=written_after_untrusted,
            code_words=code_words,
        )

    @property
    def searcher(self) -> WebSearch | None:
        return None if self._searcher is None else _Search(self)

    @property
    def fetcher(self) -> Fetch | None:
        return None if self._fetcher is None else _Fetch(self)

    def search(self, query: str, max_results: int) -> list[SearchHit]:
        why = check_outbound_text(
            query,
            to=RESEARCH_SEARCH,
            untrusted_turn=self._untrusted,
            trusted=self._trusted,
            refs=self._policy.refs,
            allow_data=self._policy.allow_data,
            datasets=self._policy.datasets,
        )
        if why:
            self.refused.append({"query": str(query)[:400], "reason": why})
            return []
        self.sent.append(sent_entry(TOOL, RESEARCH_SEARCH, query, "query"))
        assert self._searcher is not None  # only reached through ``searcher``
        return list(self._searcher.search(query, max_results=max_results))

    def fetch(self, url: str) -> Page:
        self.sent.append(sent_entry(TOOL, RESEARCH_FETCH, url, "url"))
        assert self._fetcher is not None  # only reached through ``fetcher``
        return self._fetcher.fetch(url)

    def added_to(self, update: StepUpdate) -> StepUpdate:
        """``update`` with what this node sent and refused (the channels it appends to)."""
        if self.sent:
            update["sent"] = list(self.sent)
        if self.refused:
            update["refused"] = list(self.refused)
        return update


class _Search:
    name = "sending"

    def __init__(self, owner: Sending) -> None:
        self._owner = owner

    def search(self, query: str, *, max_results: int = 8) -> list[SearchHit]:
        return self._owner.search(query, max_results)


class _Fetch:
    name = "sending"

    def __init__(self, owner: Sending) -> None:
        self._owner = owner

    def fetch(self, url: str) -> Page:
        return self._owner.fetch(url)
