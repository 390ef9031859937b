"""``--cache-only``: a finished run re-run into a fresh folder with the same response cache makes
no request to the (loopback) server and gives the same report; with one gate changed, the
attempts whose trajectory changed end ``not_cached`` and the rest match, and a later run with the
server at hand completes them (the retryable-crash rule). Refused without the cache and for
``mock/`` models. Each command is a real ``vreact`` subprocess."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

from tests.conftest import FULL
from tests.fakes.scripted_server import ScriptedServer
from tests.quality.test_replay import scripted, vreact
from vreact.spec import builtin_dir

RUN = ["run", "--dataset", str(FULL), "--limit", "8", "--configs", "N,VG", "--model", "openai/x"]


def outcomes(folder: Path) -> dict[tuple[str, str], tuple]:
    conn = sqlite3.connect(folder / "vreact.db")
    rows = conn.execute("select config, task_id, outcome, answer, abstain_cause, crash_kind from attempts")
    out = {(r[0], r[1]): r[2:] for r in rows}
    conn.close()
    return out


def figures(report: dict) -> dict:
    """A report's figures, without what differs between two runs of the same answers: the wall
    time and the folder."""
    text = json.dumps(report["configs"], sort_keys=True)
    return json.loads(re.sub(r'"(wall_s|seconds|latency_ms)[^,}]*', '"x": 0', text))


def test_a_rerun_from_the_cache_asks_nothing_and_a_changed_gate_ends_in_not_cached(tmp_path):
    cache = ["--cache-dir", str(tmp_path / "cache")]
    one_word = (
        (builtin_dir("verifiers") / "musique.yaml")
        .read_text()
        .replace("    - max_words\n", "    - max_words: {max_words: 1}\n", 1)
    )
    (tmp_path / "one_word.yaml").write_text(one_word)
    with ScriptedServer(scripted) as server:
        url = ["--base-url", server.base_url]
        first = vreact(*RUN, *url, *cache, "--out", "first", cwd=tmp_path)
        assert first.returncode == 0, first.stderr[-3000:]
        asked = len(server.requests)
        again = vreact(*RUN, *url, *cache, "--out", "again", "--cache-only", cwd=tmp_path)
        assert again.returncode == 0, again.stderr[-3000:]
        assert len(server.requests) == asked  # not one request: every reply came from the cache
        changed = vreact(
            *RUN,
            *url,
            *cache,
            "--out",
            "changed",
            "--cache-only",
            "--verifiers",
            "one_word.yaml",
            cwd=tmp_path,
        )
        assert changed.returncode == 0, changed.stderr[-3000:]
        assert len(server.requests) == asked
        was, now = outcomes(tmp_path / "first"), outcomes(tmp_path / "changed")
        missed = {k for k, v in now.items() if v[-1] == "not_cached"}
        assert missed and all(k[0] == "VG" for k in missed)  # N never met the changed gate
        assert {k: v for k, v in now.items() if k not in missed} == {
            k: v for k, v in was.items() if k not in missed
        }
        # the same command without --cache-only runs the missed attempts again, through the server
        healed = vreact(*RUN, *url, *cache, "--out", "changed", "--verifiers", "one_word.yaml", cwd=tmp_path)
        assert healed.returncode == 0, healed.stderr[-3000:]
        assert len(server.requests) > asked
        assert not [k for k, v in outcomes(tmp_path / "changed").items() if v[-1] == "not_cached"]
        assert len(outcomes(tmp_path / "changed")) == len(was)
    reports = [vreact("report", name, "--json", cwd=tmp_path) for name in ("first", "again")]
    assert all(r.returncode == 0 for r in reports)
    assert figures(json.loads(reports[0].stdout)) == figures(json.loads(reports[1].stdout))
    assert outcomes(tmp_path / "first") == outcomes(tmp_path / "again")


def test_cache_only_is_refused_without_the_cache_and_for_mock_models(tmp_path):
    no_cache = vreact(
        *RUN, "--base-url", "http://127.0.0.1:9/v1", "--cache-only", "--no-cache", "--out", "a", cwd=tmp_path
    )
    assert no_cache.returncode == 2 and "--no-cache" in no_cache.stderr
    assert len(no_cache.stderr.strip().splitlines()) == 1
    mock = vreact(
        "run",
        "--dataset",
        "sample",
        "--configs",
        "N",
        "--model",
        "mock/x",
        "--cache-only",
        "--out",
        "b",
        cwd=tmp_path,
    )
    assert mock.returncode == 2 and "mock/x is never cached" in mock.stderr, mock.stderr
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
