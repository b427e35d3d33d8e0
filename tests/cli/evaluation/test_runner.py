"""run_eval without a graph: concurrency, order, failures recorded, skipping what is stored."""

import threading
import time

import pytest

from refgate.cli.evaluation.questions import EvalError, EvalQuestion
from refgate.cli.evaluation.runner import Outcome, run_eval
from refgate.cli.evaluation.store import RunLock, RunStore

QS = [EvalQuestion(id=f"q{i}", question=f"value {i}?", numbers=[float(i)]) for i in range(6)]


def test_questions_run_at_once_and_come_back_in_file_order(tmp_path):
    store = RunStore.create(tmp_path, {"questions_file": "x"})
    live, peak, lock = [0], [0], threading.Lock()

    def execute(q, thread):
        with lock:
            live[0] += 1
            peak[0] = max(peak[0], live[0])
        time.sleep(0.05 * (6 - int(q.id[1:])))  # later questions finish first
        with lock:
            live[0] -= 1
        if q.id == "q3":
            raise ConnectionError("endpoint http://127.0.0.1:9 refused (model m)")
        return Outcome(answer=f"It is {q.id[1:]} [val_0123456789].", gate={"passed": True})

    seen = []
    results = run_eval(QS, store, execute, concurrency=3, on_result=lambda r, d, t: seen.append(d))
    assert [r["id"] for r in results] == [q.id for q in QS]
    assert peak[0] == 3 and seen == [1, 2, 3, 4, 5, 6]
    failed = results[3]
    assert failed["exit"] == 1 and failed["cell"] == "failed" and "refused" in failed["error"]
    assert all(r["cell"] == "correct_passed" for r in results if r["id"] != "q3")
    assert results[0]["thread"] == f"eval-{store.run_id}-q0"

    # a resumed run tries the failed question again, and only that one
    rerun = []
    again = run_eval(QS, store, lambda q, t: rerun.append(q.id) or Outcome(answer="It is 3."))
    assert rerun == ["q3"] and [r["id"] for r in again] == [q.id for q in QS]
    assert again[3]["correct"] and again[3]["error"] is None


def test_a_torn_last_line_is_dropped_and_that_question_runs_again(tmp_path):
    store = RunStore.create(tmp_path, {})
    run_eval(QS[:2], store, lambda q, t: Outcome(answer="1", gate={"passed": True}))
    with open(store.dir / "results.jsonl", "a") as fh:
        fh.write('{"id": "q2", "correct": tr')  # killed mid-write
    ran = []
    run_eval(QS[:3], store, lambda q, t: ran.append(q.id) or Outcome(answer="2"))
    assert ran == ["q2"]


def test_one_process_per_run(tmp_path):
    store = RunStore.create(tmp_path, {})
    with RunLock(store), pytest.raises(EvalError, match="another process"), RunLock(store):
        pass
    with pytest.raises(EvalError, match="already exists"):
        RunStore.create(tmp_path, {}, run_id=store.run_id)
