"""``engine.deep_research``: the research graph as a WORK capability.

Confirmed claims come back as webRefs (``source_type="external"``) carrying the URL, the
verbatim quote and the votes; the GATE can check a cited claim against its ref.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from langchain_core.language_models import BaseChatModel

from refgate.catalog.capabilities import EngineEnv, Evidence, RefSpec, capability
from refgate.config import load_settings
from refgate.graph.research import compile_research_graph, run_config
from refgate.models import ModelProvider
from refgate.nodes.research.backends import ResearchBackend
from refgate.nodes.research.core import ResearchLimits
from refgate.nodes.research.deps import PASS_NAME, ResearchDeps
from refgate.nodes.research.state import ClaimOut, ResearchReport
from refgate.tools.engine_call import OUTBOUND_POLICY
from refgate.tools.outbound import OutboundPolicy
from refgate.tools.urls import host_of
from refgate.tools.web_providers import Fetch, WebSearch

#: Web-derived paths in the returned data.
UNTRUSTED_FIELDS = [
    "summary",
    "findings[].claim",
    "findings[].evidence",
    "confirmed[].claim",
    "confirmed[].quote",
    "refuted[].claim",
    "unverified[].claim",
    "caveats",
    "openQuestions[]",
]


def _research_deps(env: EngineEnv, limits: ResearchLimits) -> ResearchDeps:
    """What the research graph is built with when WORK calls it: the calling run's model,
    backend and web providers (``env.extra``), its workspace, limits and outbound policy."""
    extra = env.extra or {}
    policy = extra.get(OUTBOUND_POLICY)
    model = cast("BaseChatModel | None", extra.get("research_model"))
    backend = cast("ResearchBackend | None", extra.get("research_backend"))
    if model is None and backend is None:
        settings = env.settings or load_settings(
            workspace_settings=getattr(env.workspace, "settings", None)
        )
        model = ModelProvider().for_pass(PASS_NAME, settings)
    return ResearchDeps(
        models=ModelProvider(model),
        workspace=env.workspace,
        backend=backend,
        web_search=cast("WebSearch | None", extra.get("web_search")),
        web_fetch=cast("Fetch | None", extra.get("web_fetch")),
        limits=limits,
        # the calling run's policy: its words, its workspace data, where sends are recorded
        outbound=policy if isinstance(policy, OutboundPolicy) else None,
    )


def _run(question: str, env: EngineEnv, limits: ResearchLimits) -> ResearchReport:
    deps = _research_deps(env, limits)
    graph = compile_research_graph(deps)
    state = graph.invoke({"question": question}, run_config(max_concurrency=limits.max_concurrency))
    policy = deps.outbound
    if policy is not None and policy.record is not None:
        for item in state["report"].get("sent") or []:
            policy.record(item["tool"], item["to"], item["text"], item["slot"])
    report: ResearchReport = state["report"]
    return report


@capability
def deep_research(question: str, max_sources: int = 15, *, env: EngineEnv) -> Evidence:
    """Research a question on the web and return only claims that survived 3 skeptical votes.

    Pipeline: 3-6 search angles -> web search per angle -> fetch up to ``max_sources`` pages
    (highly relevant pages even beyond it) -> 2-5 claims per page, each with a verbatim quote
    -> 25 claims ranked by code (per-page and per-site caps, corroborated claims first) get 3
    adversarial votes, each resting on a quoted sentence of a page the voter read (a vote
    without one is uncertain and counts as refuted; 2 of 3 kill a claim; too few votes cast
    leave it unverified) -> merged findings with a confidence each.

    Returns ``{"status", "summary", "findings": [{"claim", "confidence", "sources",
    "evidence", "refs": [i, ...]}], "confirmed": [{"ref": i, "claim", "quote", "source",
    "vote"}], "refuted", "unverified", "caveats", "openQuestions", "stats"}``. Each confirmed
    claim is a webRef (external) whose payload holds ``url``, ``quote``/``excerpt``, ``claim``,
    ``votes`` and the verdicts; ``refs`` and ``ref`` index the returned refs in order. Every URL
    was retrieved in this run. Text fields are web content (untrusted).
    """
    limits = ResearchLimits(max_fetch=max(1, int(max_sources)))
    report = _run(question, env, limits)
    refs = [_confirmed_ref(c, report["question"]) for c in report["confirmed"]]
    index = {c["id"]: n for n, c in enumerate(report["confirmed"])}
    return Evidence(
        data=_evidence_data(report, index), refs=refs, untrusted_fields=list(UNTRUSTED_FIELDS)
    )


def _confirmed_ref(c: ClaimOut, question: str) -> RefSpec:
    """The webRef of one confirmed claim: its page, verbatim quote and votes."""
    return RefSpec(
        kind="webRef",
        payload={
            "url": c["source"],
            "excerpt": c["quote"],
            "quote": c["quote"],
            "claim": c["claim"],
            "question": question,
            "sourceTitle": c["sourceTitle"],
            "sourceQuality": c["sourceQuality"],
            "publishDate": c["publishDate"],
            "vote": c["vote"],
            "votes": c["votes"],
            "verdicts": c["verdicts"],
            "outcome": c["outcome"],
        },
        title=f"verified web claim {c['id']} ({host_of(c['source'])})",
        source=c["source"],
        source_type="external",
    )


def _brief(c: ClaimOut) -> dict[str, object]:
    return {"claim": c["claim"], "source": c["source"], "vote": c["vote"]}


def _evidence_data(report: ResearchReport, index: Mapping[str, int]) -> dict[str, object]:
    """The capability's data: the report's findings and claims, each indexing its ref."""
    return {
        "status": report["status"],
        "question": report["question"],
        "summary": report["summary"],
        "findings": [
            {**f, "refs": [index[i] for i in f.get("claims", []) if i in index]}
            for f in report["findings"]
        ],
        "confirmed": [
            {"ref": index[c["id"]], **_brief(c), "quote": c["quote"]} for c in report["confirmed"]
        ],
        "refuted": [_brief(c) for c in report["refuted"]],
        "unverified": [_brief(c) for c in report["unverified"]],
        "caveats": report["caveats"],
        "openQuestions": report["openQuestions"],
        "stats": report["stats"],
    }


#: The graph layer's capabilities, registered by ``refgate.graph``.
CAPABILITIES = (deep_research,)
