"""``vreact probe`` on the tests' real MuSiQue records: the shipped verifiers reject no gold and
no control, catch the faults they are built for, and the faults they cannot see escape, named;
planted gates that reject or accept everything show the tables can fail; a scripted loopback
judge fills the judge columns. Each probe is a real ``vreact`` subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ANS, FULL
from tests.fakes.scripted_server import ScriptedServer
from tests.verify.test_gates import BRIDGES_NAMED_OTHERWISE  # pinned there

NISSEDAL = "2hop__269805_135710"  # hop 1 -> Norway (paragraph 10), hop 2 -> north (paragraph 6)


def vreact(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vreact.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def probe(tmp_path: Path, *args: str, out: str = "probe") -> dict:
    done = vreact("probe", *args, "--out", out, "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def rate(report: dict, fault_class: str, *checks: str) -> float:
    """The best catch rate alone of ``checks`` (``R1.supported``) on ``fault_class``."""
    rates = [
        c["catch_rate"] or 0.0
        for c in report["by_check_and_class"]
        if c["fault_class"] == fault_class and f"{c['verifier']}.{c['check']}" in checks
    ]
    return max(rates, default=0.0)


def classes(report: dict) -> dict[str, dict]:
    return {c["fault_class"]: c for c in report["classes"]}


CORPUS = ANS.parent / "musique_ans_train_100_corpus.json"


@pytest.mark.parametrize(
    ("dataset", "corpus"), [(FULL, None), (ANS, None), (ANS, CORPUS)], ids=["full", "ans", "ans-corpus"]
)
def test_the_shipped_verifiers_reject_no_gold_and_catch_what_they_are_built_for(tmp_path, dataset, corpus):
    """On every record of the tests' MuSiQue files (searched in their own paragraphs, or in the
    open corpus, where ids are the corpus's)."""
    report = probe(tmp_path, "--dataset", str(dataset), *(["--corpus", str(corpus)] if corpus else []))
    by = classes(report)
    assert report["false_rejections"] == []
    for name in ("gold", "gold_alias", "gold_paraphrase"):
        assert by[name]["artifacts"] > 0 and by[name]["escaped"] == by[name]["artifacts"], by[name]
    expected = {
        "final_hop_only": ("R3.multi_hop",),
        "fabricated_id": ("R1.evidence_retrieved",),
        "not_retrieved": ("R1.evidence_retrieved",),
        "wrong_citation": ("R1.supported", "R1.evidence_retrieved"),
        "uncited": ("R1.supported", "R1.evidence_retrieved"),
        "sentence_answer": ("R1.max_words", "R3.max_words"),
        "restated_question": ("R3.not_restatement",),
        "refusal": ("R1.not_refusal",),
        "unreasoned_abstention": ("R1.abstain_reasoned",),
    }
    for name, checks in expected.items():
        assert by[name]["artifacts"] > 0, name
        assert rate(report, name, *checks) >= 0.95, (name, rate(report, name, *checks))
    # what no gate can see escapes, and is shown with an example
    escapes = {
        "bridge_entity_full_evidence",
        "padded_citation",
        "partial_citation",
        "number_shift",
        "date_shift",
    }
    if dataset == FULL:
        escapes.add("answer_on_unanswerable")
    for name in escapes:
        assert 0 < by[name]["escaped"] <= by[name]["artifacts"] and by[name]["example_escape"], by[name]
    # the records say it again, read-only: the same tables
    again = vreact("report", "probe", "--json", cwd=tmp_path)
    assert again.returncode == 0 and json.loads(again.stdout) == report
    text = vreact("report", "probe", cwd=tmp_path).stdout
    assert "Faults that passed every check" in text and "bridge_entity_full_evidence" in text
    page = vreact("view", "probe", cwd=tmp_path)
    assert page.returncode == 0, page.stderr
    html = (tmp_path / "probe" / "report.html").read_text()
    assert "Catch rate alone, class by check" in html and "R3.multi_hop" in html


PLANTED = '''
import vreact

@vreact.gate("always_reject", kinds=("answer", "abstain"))
def always_reject():
    """Rejects everything."""
    return lambda a: vreact.reject("planted", "rejects everything")

@vreact.gate("always_accept", kinds=("answer", "abstain"))
def always_accept():
    """Accepts everything."""
    return lambda a: vreact.accept()
'''


def test_a_gate_that_rejects_everything_and_one_that_accepts_everything_show_the_tables_can_fail(tmp_path):
    (tmp_path / "planted.py").write_text(PLANTED)
    (tmp_path / "planted.yaml").write_text(
        "plugins: [./planted.py]\nkind: verifiers\nname: planted\n"
        "R1: {gates: [always_reject]}\nR3: {gates: [always_accept]}\n"
    )
    report = probe(tmp_path, "--dataset", str(FULL), "--limit", "12", "--verifiers", "planted.yaml")
    checks = {f"{c['verifier']}.{c['check']}": c for c in report["checks"]}
    controls = sum(c["artifacts"] for c in report["classes"] if c["role"] != "fault")
    every = sum(c["artifacts"] for c in report["classes"])
    assert checks["R1.always_reject"]["checked"] == checks["R1.always_reject"]["rejected"] == every
    assert checks["R1.always_reject"]["false_rejections"] == len(report["false_rejections"]) == controls > 0
    assert checks["R3.always_accept"]["rejected"] == checks["R3.always_accept"]["false_rejections"] == 0
    for c in report["classes"]:
        if c["role"] == "fault" and c["artifacts"]:
            assert rate(report, c["fault_class"], "R1.always_reject") == 1.0
            assert rate(report, c["fault_class"], "R3.always_accept") == 0.0
            assert c["escaped"] == 0


def test_a_scripted_judge_sees_only_what_every_gate_cleared(tmp_path):
    """One record (Nissedal), a loopback judge that rejects any answer naming Norway (the bridge
    entity): it catches bridge_entity_full_evidence, which every gate passes, and rejects no gold."""
    line = next(x for x in FULL.read_text().splitlines() if NISSEDAL in x)
    (tmp_path / "one.jsonl").write_text(line + "\n")

    def reply(body: dict) -> str:
        shown = body["messages"][-1]["content"]
        artifact = json.loads(shown.split("Artifact:", 1)[1])
        decision = "reject" if "Norway" in str(artifact.get("answer")) else "accept"
        return json.dumps({"reason": "scripted", "decision": decision, "confidence": 0.9})

    with ScriptedServer(reply) as server:
        report = probe(
            tmp_path, "--dataset", "one.jsonl", "--judge", "openai/judge", "--base-url", server.base_url,
            "--no-cache",
        )  # fmt: skip
        requests = len(server.requests)
    by = classes(report)
    cleared = [c for c in report["classes"] if c["caught_by_gate"] == 0 and c["artifacts"]]
    judged = sum(c["artifacts"] for c in cleared)
    assert {c["fault_class"] for c in cleared} >= {"gold", "gold_paraphrase", "bridge_entity_full_evidence"}
    judges = {j["verifier"]: j for j in report["judges"]}
    assert set(judges) == {"R1", "R3"}
    for j in judges.values():
        assert j["judged"] == judged and j["calls"] == judged and j["prompt_tokens"] > 0
        assert j["false_rejections"] == 0
    assert requests == 2 * judged
    assert by["bridge_entity_full_evidence"]["caught_only_by_judge"] == 1
    assert by["bridge_entity_full_evidence"]["escaped"] == 0
    assert judges["R3"]["caught"] >= 1 and judges["R3"]["catch_rate"] > 0
    assert report["judge"] == "openai/judge"


def test_r2_on_the_gold_chains_lists_its_expected_false_rejections(tmp_path):
    rejected = set()
    for n, dataset in enumerate((FULL, ANS)):
        report = probe(tmp_path, "--dataset", str(dataset), "--levels", "R1,R3,R2", out=f"r2-{n}")
        assert {(f["verifier"], f["check"], f["fault_class"]) for f in report["false_rejections"]} <= {
            ("R2", "chain_bridges", "gold")
        }
        rejected |= {f["task_id"] for f in report["false_rejections"]}
        checks = {(c["verifier"], c["check"]) for c in report["checks"]}
        assert {("R2", "chain_final"), ("R2", "chain_bridges"), ("R2", "chain_distinct")} <= checks
        assert report["levels"] == ["R1", "R2", "R3"]
    assert rejected == BRIDGES_NAMED_OTHERWISE


@pytest.mark.parametrize(
    ("command", "flags", "words"),
    [
        ("probe", ["--base-url", "http://127.0.0.1:9/v1"], "--base-url: only the judge's model"),
        ("probe", ["--seed", "3"], "--seed: only the judge's calls"),
        ("probe", ["--no-cache", "--cache-dir", "c"], "--no-cache, --cache-dir: only the judge's model"),
        ("probe", ["--levels", "R2"], "R2 checks only the gold chains"),
        ("probe", ["--faults", "bridg_entity"], "did you mean 'bridge_entity'"),
        ("replay", ["--models", "models.yaml"], "--models: only the judge's model"),
    ],
)
def test_a_flag_nothing_would_read_is_refused_in_one_line(tmp_path, command, flags, words):
    """Flags that only shape the judge's model, given without --judge, would do nothing: refused."""
    source = ["--dataset", "sample"] if command == "probe" else [str(tmp_path)]
    done = vreact(command, *source, *flags, "--out", "out", cwd=tmp_path)
    assert done.returncode == 2 and words in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "out").exists()
