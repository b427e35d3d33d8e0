"""The provenance contract against the real catalog: every tool's declarations are well formed,
the map and the CLI export them, and the tools that can run offline here keep the contract when
fed a canary document (an undeclared external field fails)."""

import json
import re

import pytest
from typer.testing import CliRunner

from refgate.cli import app
from refgate.provenance.boundaries import render_result
from refgate.provenance.map import contract_violations, provenance_map
from refgate.tools.registry import CATALOG, iter_specs

CANARY = "CANARY-91c2 a paragraph written by an outside author for this contract test"
PATH_RE = re.compile(r"^(\*|[A-Za-z_][\w]*(\[\])?(\.([A-Za-z_][\w]*(\[\])?|\*))*)$")


def loadable():
    return [(name, spec) for name, spec, err in iter_specs() if spec is not None]


def test_every_catalog_tool_is_in_the_map_with_well_formed_declarations():
    pmap = provenance_map(iter_specs())
    assert set(pmap["tools"]) == set(CATALOG)
    for name, spec in loadable():
        entry = pmap["tools"][name]
        assert entry["untrusted"] == sorted(spec.untrusted_fields)
        for path, origin in spec.untrusted_fields.items():
            assert PATH_RE.match(path), (name, path)
            assert isinstance(origin, str) and len(origin.strip()) >= 3, (name, path)


def test_cli_exports_the_map_as_json():
    result = CliRunner().invoke(app, ["provenance-map", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data == json.loads(json.dumps(provenance_map(iter_specs())))
    assert "WebSearch" in data["tools"]


def _web_search(ctx):
    from refgate.tools.web_providers import SearchHit

    class Provider:
        name = "canary"

        def search(self, query, *, max_results=8):
            return [
                SearchHit(
                    url="https://canary.example/a",
                    title=f"Title {CANARY}",
                    snippet=CANARY,
                    date="2024-01-01",
                )
            ]

    ctx.extra["web_search"] = Provider()
    return {"query": "canary"}


def _read(ctx, tmp_path):
    from refgate.workspace import load_workspace

    (tmp_path / "documents").mkdir()
    (tmp_path / "documents" / "filing.txt").write_text(CANARY + "\n", encoding="utf-8")
    (tmp_path / "refgate.toml").write_text('name = "canary"\n', encoding="utf-8")
    ctx.workspace = load_workspace(tmp_path)
    return {"path": "documents/filing.txt"}


RUNNERS = {"WebSearch": lambda ctx, tmp: _web_search(ctx), "read": _read}


@pytest.mark.parametrize("name", sorted(RUNNERS))
def test_real_tool_fed_a_canary_keeps_the_contract(name, ctx, tmp_path):
    from refgate.tools.registry import get_spec

    spec = get_spec(name)
    args = spec.args_schema.model_validate(RUNNERS[name](ctx, tmp_path))
    result = spec.func(args, ctx)
    assert result.ok, result.error
    assert contract_violations(spec, result, canaries=[CANARY]) == []
    rendered = render_result(spec, result, ctx)
    assert rendered.untrusted
    # the canary reaches the model only inside fences
    outside = re.sub(r"⟦UNTRUSTED:([0-9a-f]{32})⟧.*?⟦/UNTRUSTED:\1⟧", "", rendered.text, flags=re.S)
    assert CANARY not in outside
