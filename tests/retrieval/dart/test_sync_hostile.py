"""``refgate dart sync`` against a hostile OpenDART: every reproduction of a server that lies
about paths, sizes, nesting and pace. Nothing is written outside the workspace, nothing is read
past its cap, every sync ends by its deadline, the hostile filing is skipped with its reason,
the good filings beside it are stored, and the manifest lists only complete filings."""

from __future__ import annotations

import json
import time
from pathlib import Path

from typer.testing import CliRunner

from benchmarks.shared import dart_hostile as h
from refgate.cli import app
from tests.support.dart import write_workspace

runner = CliRunner()
#: The synthetic recording's eight filings; 한빛전자's FY2023 사업보고서 is the one attacked.
ALL = 8
TARGET = "20240312000101"
FAST = "request_timeout_s = 2\nsync_deadline_s = 20"


def run(ws: Path):
    return runner.invoke(app, ["dart", "sync", "-w", str(ws), "--json"])


def manifest(ws: Path) -> dict:
    return json.loads((ws / "dart" / "manifest.json").read_text("utf-8"))["filings"]


def complete(ws: Path) -> None:
    """Every filing in the manifest has all its files; no stray file, no temporary file."""
    filings = manifest(ws)
    for rcept_no, filing in filings.items():
        assert (ws / "documents/dart" / filing["corp_code"] / f"{rcept_no}.dart").is_file()
        assert (ws / "dart/raw/documents" / f"{rcept_no}.zip").is_file()
    assert {p.stem for p in (ws / "documents/dart").rglob("*.dart")} == set(filings)
    assert {p.stem for p in (ws / "dart/raw/documents").glob("*")} == set(filings)
    assert not list(ws.rglob("*.tmp"))


def files_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file()}


def document_of(target: str, reply):
    """A hook answering ``reply`` for the document of ``target``, the recording otherwise."""

    def hostile(endpoint: str, params: dict[str, str]):
        if endpoint == "document.xml" and params.get("rcept_no") == target:
            return reply
        return None

    return hostile


def summary_of(result) -> dict:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_receipt_numbers_that_are_paths_write_nothing_outside(tmp_path, dart_env):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    ws = write_workspace(tmp_path / "ws")
    bad = [
        f"../../../../../../../../..{outside}/ESCAPED",
        str(outside / "ABSOLUTE"),
        "2024031200010/",
        "20240312000101\n",
    ]
    fake = dart_env

    def hostile(endpoint: str, params: dict[str, str]):
        if endpoint == "list.json" and params.get("corp_code") == "99100001":
            code, body, _ = fake.list_json(params)
            if code != "000":
                return None
            answer = json.loads(body)
            row = answer["list"][0]
            answer["list"] += [{**row, "rcept_no": b} for b in bad]
            answer["list"].append({**row, "corp_code": "../../x", "rcept_no": "20240312000199"})
            return h.json_reply(answer)
        if endpoint == "document.xml" and not params.get("rcept_no", "").isdigit():
            return h.zip_reply({"x.xml": h.filing_xml("I. 탈출", "escaped")})
        return None

    fake.hostile = hostile
    before = files_under(tmp_path) - files_under(ws)
    summary = summary_of(run(ws))
    assert files_under(tmp_path) - files_under(ws) == before  # nothing written outside
    assert not list(outside.iterdir())
    assert len(summary["fetched"]) == ALL
    assert sum("not 14 digits" in p for p in summary["problems"]) >= 3
    assert any("not 8 digits" in p for p in summary["problems"])
    complete(ws)


def test_a_zip_bomb_is_refused_at_its_cap_and_the_others_are_stored(tmp_path, dart_env):
    dart_env.hostile = document_of(TARGET, h.Reply([h.bomb_zip(TARGET, 40)]))
    ws = write_workspace(tmp_path / "ws", limits="max_xml_mb = 2")
    summary = summary_of(run(ws))
    assert TARGET not in manifest(ws) and len(summary["fetched"]) == ALL - 1
    assert any(p.startswith(TARGET) and "2 MB" in p for p in summary["problems"])
    complete(ws)


def test_a_zip_whose_headers_lie_about_its_size_is_refused(tmp_path, dart_env):
    dart_env.hostile = document_of(TARGET, h.Reply([h.lying_zip(TARGET, 20)]))
    ws = write_workspace(tmp_path / "ws", limits="max_xml_mb = 2")
    summary = summary_of(run(ws))
    assert TARGET not in manifest(ws) and len(summary["fetched"]) == ALL - 1
    assert any(p.startswith(TARGET) for p in summary["problems"])
    complete(ws)


def test_a_filing_nested_1500_deep_is_skipped_with_its_reason_on_every_sync(tmp_path, dart_env):
    dart_env.hostile = document_of(TARGET, h.zip_reply({f"{TARGET}.xml": h.deep_xml(1500)}))
    ws = write_workspace(tmp_path / "ws")
    for _ in range(2):  # the re-sync tries it again and skips it again, without a traceback
        summary = summary_of(run(ws))
        assert any(p.startswith(TARGET) and "deeper than 200" in p for p in summary["problems"])
    assert TARGET not in manifest(ws) and len(manifest(ws)) == ALL - 1
    complete(ws)


def test_a_document_sent_a_byte_at_a_time_ends_at_the_request_deadline(tmp_path, dart_env):
    body = h.zip_bytes({f"{TARGET}.xml": h.filing_xml("I. 느림", "slow")})
    dart_env.hostile = document_of(TARGET, h.trickle(body, 0.25))
    ws = write_workspace(tmp_path / "ws", limits="request_timeout_s = 1\nsync_deadline_s = 30")
    start = time.monotonic()
    summary = summary_of(run(ws))
    assert time.monotonic() - start < 10  # a reset-per-byte read timeout would wait ~60 s
    assert any(p.startswith(TARGET) and "within 1 s" in p for p in summary["problems"])
    assert len(summary["fetched"]) == ALL - 1
    complete(ws)


def test_a_slow_server_cannot_extend_the_whole_sync(tmp_path, dart_env):
    def every_answer_slow(endpoint: str, params: dict[str, str]):
        if endpoint == "document.xml":
            _, body, _ = dart_env.document(params)
            return h.trickle(body, 0.05)  # each answer in time, the whole sync not
        return None

    dart_env.hostile = every_answer_slow
    ws = write_workspace(tmp_path / "ws", limits="request_timeout_s = 5\nsync_deadline_s = 3")
    start = time.monotonic()
    result = run(ws)
    elapsed = time.monotonic() - start
    assert result.exit_code == 1 and "deadline of 3 s" in result.output
    assert elapsed < 3 + 2
    complete(ws)  # what was stored before the deadline is whole
    dart_env.hostile = None
    resumed = summary_of(run(ws))
    assert len(manifest(ws)) == ALL and resumed["already_synced"] + len(resumed["fetched"]) == ALL


def test_a_huge_list_is_refused_by_size_not_read_whole(tmp_path, dart_env):
    huge = {"declared": h.Huge(66 * h.MB), "undeclared": h.Huge(66 * h.MB)}

    def hostile(endpoint: str, params: dict[str, str]):
        if endpoint == "list.json" and params.get("corp_code") == "99100001":
            kind = "declared" if params.get("pblntf_detail_ty") == "A001" else "undeclared"
            return huge[kind].reply(declare=kind == "declared")
        return None

    dart_env.hostile = hostile
    ws = write_workspace(tmp_path / "ws", limits="max_json_mb = 1")
    summary = summary_of(run(ws))
    problems = [p for p in summary["problems"] if p.startswith("한빛전자")]
    assert len(problems) == 3 and all("cap of 1 MB" in p for p in problems)
    assert huge["declared"].sent < 12 * h.MB  # refused on its Content-Length (socket buffers)
    assert huge["undeclared"].sent < 16 * h.MB  # stopped once past the cap, not 66 MB
    # the other companies' filings are stored
    assert {f["corp_code"] for f in manifest(ws).values()} == {"99100002", "99100003"}
    complete(ws)


def test_bad_json_bad_statuses_and_deep_json_skip_only_their_filing(tmp_path, dart_env):
    replies = {
        "20240312000101": h.bad_json(),
        "20240814000103": h.deep_json(100_000),
        "20230310000102": h.status(502),
    }

    def hostile(endpoint: str, params: dict[str, str]):
        if endpoint != "fnlttSinglAcntAll.json" or params.get("corp_code") != "99100001":
            return None
        year = {"2023": "20240312000101", "2024": "20240814000103"}.get(params["bsns_year"])
        return replies.get(year or "") if params.get("reprt_code") != "11011" or year else None

    dart_env.hostile = hostile
    ws = write_workspace(tmp_path / "ws", limits=FAST)
    summary = summary_of(run(ws))
    assert "20240312000101" not in manifest(ws) and "20240814000103" not in manifest(ws)
    assert any("not JSON" in p for p in summary["problems"])
    assert len(summary["fetched"]) == ALL - 2
    complete(ws)


def test_a_filing_that_always_fails_does_not_block_the_others(tmp_path, dart_env):
    dart_env.hostile = document_of(TARGET, h.status(500))
    ws = write_workspace(tmp_path / "ws", limits=FAST)
    for _ in range(2):  # tried again by the next sync, never blocking the ones after it
        summary = summary_of(run(ws))
        assert any(p.startswith(TARGET) and "HTTP 500" in p for p in summary["problems"])
    assert len(manifest(ws)) == ALL - 1
    complete(ws)


def test_full_width_digits_are_not_a_receipt_number(tmp_path, dart_env):
    fake = dart_env

    def hostile(endpoint: str, params: dict[str, str]):
        if endpoint == "list.json" and params.get("corp_code") == "99100001":
            code, body, _ = fake.list_json(params)
            if code != "000":
                return None
            answer = json.loads(body)
            answer["list"].append({**answer["list"][0], "rcept_no": "２０２４０３１２０００１９９"})
            return h.json_reply(answer)
        if endpoint == "document.xml" and not params.get("rcept_no", "").isascii():
            return h.zip_reply({"x.xml": h.filing_xml("I. 전각", "full width")})
        return None

    fake.hostile = hostile
    ws = write_workspace(tmp_path / "ws")
    summary = summary_of(run(ws))
    assert any("not 14 digits" in p for p in summary["problems"])
    assert len(manifest(ws)) == ALL and all(k.isascii() for k in manifest(ws))
    complete(ws)


def test_a_document_no_charset_decodes_is_skipped_not_indexed_as_garbage(tmp_path, dart_env):
    garbage = b'<?xml version="1.0" encoding="utf-8"?><DOCUMENT><BODY><P>\xc8\xff\xfe\x80</P>'
    dart_env.hostile = document_of(TARGET, h.zip_reply({f"{TARGET}.xml": garbage}))
    ws = write_workspace(tmp_path / "ws")
    summary = summary_of(run(ws))
    assert any(p.startswith(TARGET) and "cannot decode" in p for p in summary["problems"])
    assert TARGET not in manifest(ws) and len(manifest(ws)) == ALL - 1
    complete(ws)


def test_a_gzip_bomb_is_inflated_no_further_than_the_cap(tmp_path, dart_env):
    import resource

    dart_env.hostile = document_of(TARGET, h.gzip_bomb(300))
    ws = write_workspace(tmp_path / "ws", limits="max_zip_mb = 1")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    summary = summary_of(run(ws))
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert any(p.startswith(TARGET) and "cap of 1 MB" in p for p in summary["problems"])
    assert grown_mb < 40  # httpx alone inflates a 64 KB network chunk to 64 MB
    assert len(manifest(ws)) == ALL - 1


def test_limits_out_of_range_or_unknown_exit_2(tmp_path, dart_env):
    for limits, said in [
        ("max_json_mb = -1", "max_json_mb: a number from"),
        ("sync_deadline_s = true", "sync_deadline_s: a number from"),
        ("max_files = 3", "unknown key(s) max_files"),
    ]:
        result = run(write_workspace(tmp_path / "ws", limits=limits))
        assert result.exit_code == 2 and said in result.output.replace("\n", ""), result.output
    assert dart_env.calls == []
