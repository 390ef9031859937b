"""``vreact replay`` on runs recorded through a loopback server (20 real MuSiQue-Full records,
scripted replies): with the run's own verifier set every verdict is reproduced; without
``multi_hop`` the rejections it made turn to accepts, by gold correctness; a gate whose verdict
depends on a counter is named non-deterministic (exit 1); an N run's final answers filtered by
the shipped R1 and R3 gates give the post-hoc point beside the run's own. Each command is a real
``vreact`` subprocess; the source folder is never written."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FULL, assert_records_whole
from tests.fakes.scripted_server import ScriptedServer
from vreact.qa.dataset import Task, load_tasks
from vreact.spec import builtin_dir

TASKS = load_tasks(FULL)[:20]
BY_QUESTION = {t.question: t for t in TASKS}


def vreact(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vreact.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def hop_ids(t: Task) -> list[str]:
    return list(dict.fromkeys(str(h.paragraph_support_idx) for h in t.question_decomposition))


def step(action: str, value: str, evidence: list[str] = ()) -> str:  # type: ignore[assignment]
    return json.dumps({"thought": "", "action": action, "input": value, "evidence": list(evidence)})


def scripted(body: dict) -> str:
    """Search, read each hop's paragraph, then finish: a third of the records first with the gold
    answer citing the last hop's paragraph alone (multi_hop rejects it), a third first with the
    first hop's entity citing its paragraph (wrong, and multi_hop rejects it), the rest with the
    gold citing every hop; after a single_hop rejection, the gold citing every hop. Unanswerable
    records: one search, then abstain."""
    prompt = "\n".join(m["content"] for m in body["messages"])
    task = next(t for q, t in BY_QUESTION.items() if q in prompt)
    done = len(re.findall(r"(?m)^\d+\. (search|read|finish|abstain)", prompt))
    if not task.answerable:
        return step("search", task.question) if done == 0 else step("abstain", "the paragraphs do not say")
    ids = hop_ids(task)
    if done == 0:
        return step("search", task.question)
    if done <= len(ids):
        return step("read", ids[done - 1])
    k, retried = TASKS.index(task), "single_hop" in prompt
    if k % 3 == 0 and not retried:
        return step("finish", task.answer, ids[-1:])
    if k % 3 == 1 and not retried:
        return step("finish", str(task.question_decomposition[0].answer), ids[:1])
    return step("finish", task.answer, ids)


FLAKY = '''
import itertools
import vreact

_calls = itertools.count()

@vreact.gate("flaky")
def flaky():
    """Accepts every other answer it sees: its verdict depends on a counter."""
    return lambda a: vreact.accept() if next(_calls) % 2 else vreact.reject("flaky", "every other one")
'''


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    """Three runs through one loopback server: VG and N with the shipped sets, and VG with a lab
    set that adds the flaky gate to R1."""
    root = tmp_path_factory.mktemp("replay")
    (root / "flaky.py").write_text(FLAKY)
    shipped = (builtin_dir("verifiers") / "musique.yaml").read_text()
    (root / "flaky.yaml").write_text(
        "plugins: [./flaky.py]\n" + shipped.replace("    - parses\n", "    - parses\n    - flaky\n", 1)
    )
    (root / "no_multi_hop.yaml").write_text(re.sub(r"(?m)^\s+- multi_hop.*\n", "", shipped))
    with ScriptedServer(scripted) as server:
        for name, configs, extra in (
            ("vg", "VG", []),
            ("n", "N", []),
            ("flaky", "VG", ["--verifiers", "flaky.yaml"]),
        ):
            ran = vreact(
                "run", "--dataset", str(FULL), "--limit", "20", "--configs", configs, "--model", "openai/x",
                "--base-url", server.base_url, "--no-cache", "--out", name, *extra, cwd=root,
            )  # fmt: skip
            assert ran.returncode == 0, ran.stderr[-3000:]
            assert_records_whole(root / name)
    return root


def digest(folder: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()
    }


def replay(runs: Path, source: str, out: str, *args: str) -> tuple[subprocess.CompletedProcess[str], dict]:
    before = digest(runs / source)
    done = vreact("replay", source, "--out", out, "--json", *args, cwd=runs)
    assert digest(runs / source) == before  # the source is read only: not a byte written
    return done, (json.loads(done.stdout) if done.returncode in (0, 1) and done.stdout else {})


def test_the_run_s_own_set_reproduces_every_recorded_verdict(runs):
    done, report = replay(runs, "vg", "vg-same")
    assert done.returncode == 0, done.stderr[-3000:]
    assert report["nondeterministic"] == [] and report["verdicts"] == []
    assert report["checks"] and all(
        c["accept_to_reject"] == c["reject_to_accept"] == c["newly_run"] == c["no_longer_run"] == 0
        for c in report["checks"]
    )
    assert sum(c["unchanged"] for c in report["checks"]) > 100
    [vg] = report["configs"]
    assert vg["as_run"] == vg["post_hoc"] and vg["p"] == 1.0
    assert_records_whole(runs / "vg-same")
    linked = json.loads(
        sqlite3.connect(runs / "vg-same" / "vreact.db").execute("select config_json from runs").fetchone()[0]
    )
    # the source by its path from the replay's folder: the two read each other wherever they go
    assert (linked["kind"], linked["source"], linked["source_run"]) == ("replay", "../vg", 1)


def test_a_replay_and_its_source_moved_together_still_report(runs, tmp_path):
    """As docs/evidence/ keeps them, in a clone elsewhere: the replay's report reads its source
    again from beside it, and names it by its path from where the report is asked."""
    done, report = replay(runs, "vg", "vg-moved")
    assert done.returncode == 0, done.stderr[-3000:]
    moved = tmp_path / "clone" / "evidence"
    for name in ("vg", "vg-moved"):
        shutil.copytree(runs / name, moved / name)
    shutil.rmtree(runs / "vg-moved")  # nothing is read from where it was made
    again = vreact("report", "evidence/vg-moved", "--json", cwd=tmp_path / "clone")
    assert again.returncode == 0, again.stderr[-3000:]
    read = json.loads(again.stdout)
    assert read["source"] == "evidence/vg" and read["configs"] == report["configs"]
    shutil.rmtree(moved / "vg")
    gone = vreact("report", "evidence/vg-moved", cwd=tmp_path / "clone")
    assert gone.returncode == 2 and "evidence/vg" in gone.stderr and "Traceback" not in gone.stderr


def test_without_multi_hop_its_rejections_turn_to_accepts_by_gold_correctness(runs):
    done, report = replay(runs, "vg", "vg-no-multi-hop", "--verifiers", "no_multi_hop.yaml")
    assert done.returncode == 0, done.stderr[-3000:]
    [turned] = report["verdicts"]
    # the scripted first finishes multi_hop rejected: the gold on one paragraph, the first hop's entity
    assert turned["verifier"] == "R3" and turned["accept_to_reject"] == {}
    assert turned["reject_to_accept"]["right"] >= 2 and turned["reject_to_accept"]["wrong"] >= 2
    checks = {(c["verifier"], c["check"]): c for c in report["checks"]}
    assert checks[("R3", "multi_hop")]["no_longer_run"] > 0 and checks[("R3", "multi_hop")]["unchanged"] == 0
    text = vreact("report", "vg-no-multi-hop", cwd=runs)
    assert text.returncode == 0 and "Verdicts that changed" in text.stdout, text.stderr


def test_a_gate_that_counts_is_named_non_deterministic_and_exits_1(runs):
    done, report = replay(runs, "flaky", "flaky-again", "--verifiers", "flaky.yaml")
    assert done.returncode == 1, done.stderr[-3000:]
    assert report["nondeterministic"] and all(
        line.startswith("R1.flaky on attempt") for line in report["nondeterministic"]
    )
    assert "not deterministic" in done.stderr


def test_an_n_run_filtered_by_the_shipped_gates_gives_the_post_hoc_point(runs):
    done, report = replay(runs, "n", "n-post-hoc")
    assert done.returncode == 0, done.stderr[-3000:]
    [n] = report["configs"]
    as_run, post = n["as_run"], n["post_hoc"]
    # N answers every answerable record; multi_hop rejects the one-paragraph finishes post hoc
    assert n["rejected_right"] >= 2 and n["rejected_wrong"] >= 2
    assert post["answered"] == as_run["answered"] - n["rejected_right"] - n["rejected_wrong"]
    assert post["coverage"] < as_run["coverage"] and post["silent_errors"] < as_run["silent_errors"]
    assert 0.0 <= n["p"] <= 1.0
    page = vreact("view", "n-post-hoc", cwd=runs)
    assert page.returncode == 0, page.stderr
    html = (runs / "n-post-hoc" / "report.html").read_text()
    assert "Risk against coverage" in html and html.count("<circle") == 2  # as run and post hoc
    again = vreact("report", "n-post-hoc", "--json", cwd=runs)
    assert json.loads(again.stdout) == report


def test_a_replay_or_a_probe_is_not_replayed(runs, tmp_path):
    probe = vreact("probe", "--dataset", "sample", "--out", str(tmp_path / "probe"), cwd=tmp_path)
    assert probe.returncode == 0, probe.stderr
    made = vreact("replay", str(runs / "vg"), "--out", str(tmp_path / "replay"), cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    for folder, kind in ((tmp_path / "replay", "replay"), (tmp_path / "probe", "probe")):
        done = vreact("replay", str(folder), "--out", str(tmp_path / f"again-{kind}"), cwd=tmp_path)
        assert done.returncode == 2 and f"is a {kind}, not a run" in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / f"again-{kind}").exists()


def test_records_made_before_gate_inputs_were_kept_are_refused_in_one_line(runs, tmp_path):
    old = tmp_path / "old"
    shutil.copytree(runs / "vg", old)
    conn = sqlite3.connect(old / "vreact.db")
    conn.execute("update verdicts set input_hash = null")  # as an older vreact left them, migrated since
    conn.execute(
        "update _migrations set applied = (select max(started) + 60 from runs)"
        " where name = '_m019_gate_inputs'"
    )
    conn.commit()
    conn.close()
    done = vreact("replay", str(old), "--out", str(tmp_path / "r"), cwd=tmp_path)
    assert done.returncode == 2 and "migration 019" in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "r").exists()


def test_with_a_judge_the_set_s_judges_run_where_every_gate_passed_and_filter_post_hoc(runs):
    """A loopback judge that rejects everything: every final answer of N that the gates kept is
    now rejected post hoc, each judge call is recorded in the replay folder, and the report of
    the folder reads the judges' decisions back."""
    gates_only = json.loads(vreact("report", "n-post-hoc", "--json", cwd=runs).stdout)["configs"][0]

    def reject(body: dict) -> str:
        return json.dumps({"reason": "scripted", "decision": "reject", "confidence": 0.9})

    with ScriptedServer(reject) as judge:
        done, report = replay(
            runs, "n", "n-judged", "--judge", "openai/judge", "--base-url", judge.base_url, "--no-cache"
        )
        requests = len(judge.requests)
    assert done.returncode == 0, done.stderr[-3000:]
    [n] = report["configs"]
    kept = gates_only["post_hoc"]["answered"]
    assert kept > 0 and n["post_hoc"]["answered"] == 0
    assert n["rejected_right"] + n["rejected_wrong"] == n["as_run"]["answered"]
    assert requests == 2 * kept  # R1's judge and R3's, on each answer every gate passed
    conn = sqlite3.connect(runs / "n-judged" / "vreact.db")
    calls = conn.execute("select count(*) from model_calls where role = 'judge'").fetchone()[0]
    judged = conn.execute(
        "select count(*) from verdicts where source = 'judge' and decision = 'reject'"
    ).fetchone()[0]
    conn.close()
    assert calls == judged == requests
    assert json.loads(vreact("report", "n-judged", "--json", cwd=runs).stdout) == report
    assert_records_whole(runs / "n-judged")


def test_a_run_whose_steps_were_rejected_unparsed_replays(tmp_path):
    """A step the parse gate rejected keeps no gate input (the raw text is no artifact): such a
    run is no older run, and replays with 0 differences."""

    def garbled_first(body: dict) -> str:
        prompt = "\n".join(m["content"] for m in body["messages"])
        fresh = not re.search(r"(?m)^\d+\. ", prompt)
        return "I think the answer is north" if fresh else scripted(body)

    with ScriptedServer(garbled_first) as server:
        ran = vreact(
            *("run", "--dataset", str(FULL), "--limit", "3", "--configs", "VG", "--model", "openai/x"),
            *("--base-url", server.base_url, "--no-cache", "--out", "vg"),
            cwd=tmp_path,
        )
    assert ran.returncode == 0, ran.stderr[-3000:]
    conn = sqlite3.connect(tmp_path / "vg" / "vreact.db")
    unparsed = conn.execute(
        "select count(*) from verdicts where check_name = 'parses' and input_hash is null"
    )
    assert unparsed.fetchone()[0] > 0
    conn.close()
    done = vreact("replay", "vg", "--out", "again", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["nondeterministic"] == []


def test_the_examples_as_stated_are_refused_for_a_family_whose_tasks_state_none(runs):
    """``--examples stated`` re-reads a code prompt's examples: on a question-answering run it is
    one line, and nothing is made."""
    done, _ = replay(runs, "n", "stated", "--examples", "stated")
    assert done.returncode == 2, done.stderr[-2000:]
    assert "whose tasks state no examples" in done.stderr and "Traceback" not in done.stderr
    assert not (runs / "stated").exists()
