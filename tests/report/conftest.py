import pytest

from tests.support.report_runs import ask_with_report, macro_workspace


@pytest.fixture(scope="package")
def reports(tmp_path_factory):
    """Two scripted runs written by `refgate ask --output`: a clean one (.html, .md, .json via
    `refgate report`) and one whose document and answer carry injection attempts."""
    root = tmp_path_factory.mktemp("reports")
    ws = macro_workspace(root)
    out = {"workspace": ws}
    with pytest.MonkeyPatch.context() as env:
        for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "REFGATE_MODEL", "REFGATE_DATABASE_URL"):
            env.delenv(name, raising=False)
        env.setenv("REFGATE_MAX_RETRIES", "1")
        for key, hostile in (("clean", False), ("hostile", True)):
            path = root / f"{key}.html"
            result = ask_with_report(ws, path, hostile=hostile, thread=f"t-{key}", env=env)
            if not path.is_file():
                pytest.fail(
                    f"the {key} run wrote no report (exit {result.exit_code}):\n"
                    + result.output[-3000:]
                )
            out[key] = path
            out[f"{key}_result"] = result
    return out
