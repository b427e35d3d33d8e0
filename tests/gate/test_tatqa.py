"""Real material: TAT-QA annual-report tables, gold answers and scales (tests/data/tatqa, CC BY 4.0).

Each gold answer is rendered as a claim with its scale word and cited to a ref built from its own
context: a tableRef built faithfully from the context's table (header rows -> columns, cells kept
as the report prints them, ``meta.scale`` = the question's scale) for answers read from the table,
or a valueRef holding the gold value for arithmetic answers. The gate must accept those, and block
the same claim with the value perturbed, with a wrong scale word, or cited to another context's ref.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from shared.tatqa_tables import header_and_rows, number_cell

from refgate.gate import check_answer
from refgate.refs import Ref

DATA = Path(__file__).resolve().parents[1] / "data" / "tatqa" / "tatqa_dev_subset.json"
SCALE_WORD = {"": "", "thousand": " thousand", "million": " million", "billion": " billion"}
WRONG_SCALE = {"": " million", "thousand": " million", "million": " billion", "billion": " million"}


def table_ref(ctx: dict, scale: str) -> Ref:
    """A tableRef for a TAT-QA table: leading non-numeric rows are the column header."""
    cols, rows = header_and_rows(ctx["table"]["table"])
    meta = {"scale": scale, "source": "TAT-QA dev", "uid": ctx["table"]["uid"]}
    payload = {"columns": cols, "rows": rows, "units": {}, "meta": meta}
    return Ref(
        id=f"tbl_{ctx['table']['uid'][:10].replace('-', '0')}", kind="tableRef", payload=payload
    )


def value_ref(q: dict) -> Ref:
    unit = "%" if q["scale"] == "percent" else "USD"
    payload = {
        "values": {"answer": q["answer"]},
        "units": {"answer": unit},
        "scale": "" if q["scale"] == "percent" else q["scale"],
    }
    return Ref(id=f"val_{q['uid'][:10].replace('-', '0')}", kind="valueRef", payload=payload)


def render(value: str, scale: str) -> str:
    """The gold answer as an analyst would write it: value plus the question's scale word."""
    if scale == "percent":
        return value if value.rstrip().endswith("%") else value + "%"
    return value + SCALE_WORD[scale]


def _fmt(x: float, decimals: int) -> str:
    return f"{x:,.{decimals}f}"


def _decimals(text: str) -> int:
    m = re.search(r"\.(\d+)", text)
    return len(m.group(1)) if m else 0


def cases() -> list[dict]:
    contexts = json.loads(DATA.read_text(encoding="utf-8"))
    out = []
    for ci, ctx in enumerate(contexts):
        for q in ctx["questions"]:
            scale = q["scale"]
            if scale not in ("", "thousand", "million", "billion", "percent"):
                continue
            if q["answer_type"] == "arithmetic" and isinstance(q["answer"], int | float):
                gold = q["answer"]
                shown = _fmt(gold, _decimals(repr(float(gold))) if float(gold) % 1 else 0)
                ref = value_ref(q)
            elif (
                q["answer_type"] == "span"
                and q["answer_from"] == "table"
                and len(q["answer"]) == 1
                and number_cell(str(q["answer"][0]))
            ):
                shown = str(q["answer"][0]).strip()
                ref = table_ref(ctx, scale)
            else:
                continue
            out.append({"ctx": ci, "scale": scale, "shown": shown, "ref": ref, "q": q})
    return out


def _perturb(shown: str) -> str:
    """The shown value moved well beyond its shown precision (x1.37, plus 3 units of last place)."""
    digits = re.search(r"\d[\d,]*(?:\.\d+)?", shown)
    assert digits
    d = _decimals(digits.group())
    v = float(digits.group().replace(",", ""))
    new = _fmt(v * 1.37 + 3 * 10.0**-d, d)
    return shown[: digits.start()] + new + shown[digits.end() :]


def _claim(shown: str, scale: str, ref_id: str) -> str:
    return f"The reported figure is {render(shown, scale)} [{ref_id}]."


def test_tatqa_gold_accepted_and_perturbations_blocked() -> None:
    cs = cases()
    assert len(cs) >= 120, len(cs)
    accepted = perturbed = wrong_scale = foreign = 0
    n_wrong_scale = 0
    failures: list[str] = []
    for i, c in enumerate(cs):
        ref: Ref = c["ref"]
        gold = check_answer(_claim(c["shown"], c["scale"], ref.id), [ref])
        if gold.passed:
            accepted += 1
        else:
            failures.append(f"{c['shown']} {c['scale']}: {[x.detail for x in gold.issues]}")
        bad = check_answer(_claim(_perturb(c["shown"]), c["scale"], ref.id), [ref])
        perturbed += not bad.passed
        if c["scale"] != "percent" and not c["shown"].endswith("%"):
            n_wrong_scale += 1
            ws = f"The reported figure is {c['shown']}{WRONG_SCALE[c['scale']]} [{ref.id}]."
            wrong_scale += not check_answer(ws, [ref]).passed
        # Another context's ref (the next case from a different context).
        other = next(o for o in cs[i + 1 :] + cs[:i] if o["ctx"] != c["ctx"])
        fr = check_answer(_claim(c["shown"], c["scale"], other["ref"].id), [ref, other["ref"]])
        foreign += not fr.passed
    n = len(cs)
    rates = {
        "cases": n,
        "gold accepted": accepted / n,
        "perturbed blocked": perturbed / n,
        "wrong scale blocked": wrong_scale / n_wrong_scale,
        "other context's ref blocked": foreign / n,
    }
    print("\nTAT-QA gate rates:", json.dumps(rates, indent=1))
    for f in failures[:10]:
        print("  rejected gold:", f)
    assert rates["gold accepted"] >= 0.97
    assert rates["perturbed blocked"] >= 0.97
    assert rates["wrong scale blocked"] >= 0.97
    assert rates["other context's ref blocked"] >= 0.9
