"""``engine.deep_research``: the research graph as a WORK capability.

Confirmed claims come back as webRefs (``source_type="external"``) carrying the URL, the
verbatim quote and the votes; the GATE can check a cited claim against its ref.
"""

from __future__ import annotations

from typing import Any

from refgate.catalog.capabilities import EngineEnv, Evidence, RefSpec, capability
from refgate.config import load_settings
from refgate.graph.research import build_research_graph, run_config
from refgate.models import ModelProvider
from refgate.nodes.research.core import ResearchLimits
from refgate.nodes.research.deps import PASS_NAME
from refgate.tools.engine_call import OUTBOUND_POLICY
from refgate.tools.outbound import OutboundPolicy
from refgate.tools.urls import host_of

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


def _run(question: str, env: EngineEnv, limits: ResearchLimits) -> dict[str, Any]:
    extra = env.extra or {}
    policy = extra.get(OUTBOUND_POLICY)
    kwargs: dict[str, Any] = {
        "model": extra.get("research_model"),
        "backend": extra.get("research_backend"),
        "web_search": extra.get("web_search"),
        "web_fetch": extra.get("web_fetch"),
        "workspace": env.workspace,
        "limits": limits,
        # the calling run's policy: its words, its workspace data, where sends are recorded
        "outbound": policy if isinstance(policy, OutboundPolicy) else None,
    }
    if kwargs["model"] is None and kwargs["backend"] is None:
        settings = env.settings or load_settings(
            workspace_settings=getattr(env.workspace, "settings", None)
        )
        kwargs["model"] = ModelProvider().for_pass(PASS_NAME, settings)
    graph = build_research_graph(**kwargs)
    state = graph.invoke({"question": question}, run_config(max_concurrency=limits.max_concurrency))
    if isinstance(policy, OutboundPolicy) and policy.record is not None:
        for item in state["report"].get("sent") or []:
            policy.record(item["tool"], item["to"], item["text"], item["slot"])
    return state["report"]


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
    refs: list[RefSpec] = []
    index: dict[str, int] = {}
    for c in report["confirmed"]:
        index[c["id"]] = len(refs)
        refs.append(
            RefSpec(
                kind="webRef",
                payload={
                    "url": c["source"],
                    "excerpt": c["quote"],
                    "quote": c["quote"],
                    "claim": c["claim"],
                    "question": report["question"],
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
        )
    brief = lambda c: {"claim": c["claim"], "source": c["source"], "vote": c["vote"]}  # noqa: E731
    data = {
        "status": report["status"],
        "question": report["question"],
        "summary": report["summary"],
        "findings": [
            {**f, "refs": [index[i] for i in f.get("claims", []) if i in index]}
            for f in report["findings"]
        ],
        "confirmed": [
            {"ref": index[c["id"]], **brief(c), "quote": c["quote"]} for c in report["confirmed"]
        ],
        "refuted": [brief(c) for c in report["refuted"]],
        "unverified": [brief(c) for c in report["unverified"]],
        "caveats": report["caveats"],
        "openQuestions": report["openQuestions"],
        "stats": report["stats"],
    }
    return Evidence(data=data, refs=refs, untrusted_fields=list(UNTRUSTED_FIELDS))


#: The graph layer's capabilities, registered by ``refgate.graph``.
CAPABILITIES = (deep_research,)
