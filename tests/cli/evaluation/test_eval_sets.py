"""The shipped question sets: the sample workspace's golds come from its data; the TAT-QA
converter writes a loadable workspace and a question file with numeric and span gold."""

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from refgate.cli import app
from refgate.cli.evaluation.questions import load_questions
from refgate.cli.evaluation.tatqa import convert_tatqa
from refgate.workspace import load_workspace

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "examples" / "us-macro"
TATQA = ROOT / "tests" / "data" / "tatqa" / "tatqa_dev_subset.json"


def test_the_sample_question_file_is_what_its_generator_computes_from_the_data(tmp_path):
    committed = (SAMPLE / "eval.jsonl").read_text(encoding="utf-8")
    script = tmp_path / "make_eval.py"
    script.write_text(
        (SAMPLE / "make_eval.py")
        .read_text()
        .replace("HERE = Path(__file__).resolve().parent", f"HERE = Path({str(SAMPLE)!r})")
        .replace(
            '(HERE / "eval.jsonl").write_text',
            f'(Path({str(tmp_path)!r}) / "eval.jsonl").write_text',
        )
    )
    subprocess.run([sys.executable, str(script)], check=True, capture_output=True)
    assert (tmp_path / "eval.jsonl").read_text(encoding="utf-8") == committed
    questions = load_questions(SAMPLE / "eval.jsonl")
    assert len(questions) >= 20
    kinds = {q.id.split("-")[0] for q in questions}
    assert sum(q.expect == "refuse" for q in questions) >= 3
    assert any("peak" in q.id or "top5" in q.id for q in questions), kinds  # ranking / date
    assert any("change" in q.id for q in questions)


def test_the_tatqa_converter_writes_a_workspace_and_questions(tmp_path):
    out = tmp_path / "tatqa"
    conv = convert_tatqa(TATQA, out, limit=3)
    assert conv.contexts == 3 and conv.questions > 0
    ws = load_workspace(out)
    assert len(ws.datasets) == 3
    questions = load_questions(conv.questions_file)
    assert len(questions) == conv.questions
    source = json.loads(TATQA.read_text())[:3]
    arithmetic = [q for c in source for q in c["questions"] if q["answer_type"] == "arithmetic"]
    numeric = [q for q in questions if q.numbers]
    assert len(numeric) >= len(arithmetic)
    first = next(q for q in source[0]["questions"] if q["answer_type"] == "arithmetic")
    mine = next(
        q
        for q in questions
        if q.id.endswith(f"-{first['order']}") and q.id.startswith(next(iter(ws.datasets))[:5])
    )
    assert first["question"] in mine.question and mine.numbers == [float(first["answer"])]
    assert "CC BY 4.0" in (out / "SOURCE.txt").read_text()
    # the context's paragraphs are a document, its table a CSV with named columns
    assert sorted(p.suffix for p in (out / "documents").iterdir()) == [".txt"] * 3
    header = next(iter((out / "data").iterdir())).read_text().splitlines()[0]
    assert header.split(",")[0] and "col1" not in header


def test_the_converter_is_reachable_from_the_cli_and_refuses_to_overwrite(tmp_path):
    out = tmp_path / "w"
    first = CliRunner().invoke(
        app, ["eval", "--from-tatqa", str(TATQA), "--to", str(out), "--limit", "2"]
    )
    assert first.exit_code == 0, first.output
    assert "questions over 2 contexts" in first.stdout
    again = CliRunner().invoke(app, ["eval", "--from-tatqa", str(TATQA), "--to", str(out)])
    # the message is wrapped at the console's width, which a long temporary path can reach
    assert again.exit_code == 2 and "already holds a workspace" in " ".join(again.output.split())
