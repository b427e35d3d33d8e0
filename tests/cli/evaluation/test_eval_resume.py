"""A killed eval continues where it stopped: finished questions are not asked again, and the
question killed mid-run is finished on its thread. Real processes, a real SIGKILL."""

import json
import os
import signal
import subprocess
import sys
import threading
import time

from refgate.testing_openai import OpenAIStub

PLAN = '{"lens": "single value", "criteria": []}'
ANSWER = "The workspace holds no data on that, so I cannot answer this question."
QUESTIONS = [
    {"id": "first", "question": "What was the GDP of Atlantis in 1900?", "expect": "refuse"},
    {"id": "second", "question": "What was the GDP of Lemuria in 1900?", "expect": "refuse"},
]


def asked_about_atlantis(stub) -> int:
    """Requests of the first question's run (later runs may recall its decisions: not counted)."""
    return sum("Atlantis" in r.text and "Lemuria" not in r.text for r in stub.chat_requests())


def wait_for(predicate, timeout=90.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def test_a_killed_eval_resumes_without_redoing_finished_questions(tmp_path, mini_workspace):
    qfile = tmp_path / "q.jsonl"
    qfile.write_text("\n".join(json.dumps(q) for q in QUESTIONS) + "\n")
    killed = threading.Event()

    def brief(req):
        if "Lemuria" in req.text and not killed.is_set():
            killed.wait(60)  # the process is killed while it waits for this reply
        return PLAN

    rules = [
        ("You are BRIEF", brief),
        ("You are WORK", "nothing covers it"),
        ("You are CRITIQUE", "[]"),
        ("You are COMPOSE", ANSWER),
        ("You are HARVEST", "none"),
    ]
    with OpenAIStub(rules=rules) as stub:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "REFGATE_"))}
        env.update(
            stub.env(), REFGATE_MODEL="stub-model", REFGATE_LOCAL_LLM="0", REFGATE_MAX_RETRIES="1"
        )
        cmd = [
            sys.executable,
            "-m",
            "refgate.cli",
            "eval",
            str(qfile),
            "--workspace",
            str(mini_workspace),
        ]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        runs = mini_workspace / ".refgate" / "eval"
        try:
            assert wait_for(
                lambda: (
                    runs.is_dir() and any((p / "results.jsonl").is_file() for p in runs.iterdir())
                )
            ), "first result"
            assert wait_for(lambda: any("Lemuria" in r.text for r in stub.chat_requests()))
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
        (run_dir,) = list(runs.iterdir())
        lines = (run_dir / "results.jsonl").read_text().splitlines()
        assert [json.loads(x)["id"] for x in lines] == ["first"]
        asked_first = asked_about_atlantis(stub)

        killed.set()
        out = tmp_path / "r.json"
        done = subprocess.run(
            [
                *cmd[:4],
                "--resume",
                run_dir.name,
                "--workspace",
                str(mini_workspace),
                "--output",
                str(out),
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert asked_about_atlantis(stub) == asked_first, (
            "the finished question was not asked again"
        )
    doc = json.loads(out.read_text())
    assert [q["id"] for q in doc["questions"]] == ["first", "second"]
    assert all(q["correct"] for q in doc["questions"]) and doc["summary"]["n"] == 2
    assert doc["run_id"] == run_dir.name
