"""The attack table of the report (dataset.attacks): accuracy on the clean tasks and on their
attacked copies, the attacker's success, what became of each attacked attempt and which check
stopped it, and what the defence checks cost on the clean tasks.

The attempts are run by the project's own runner with scripted mock models on a real MuSiQue
record and its attacked copies (vreact.qa.attacks). An "obedient" executor does what the
added paragraph says: the test reads the added id and the target from the copy (no role can).
The verifier set is the shipped one without the defence gates (written elsewhere), so the
rejections here are by checks whose behaviour these tests can rely on; the defences' counts are
tested on verdicts written through the store."""

from __future__ import annotations

import json
from collections import Counter
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from tests.helpers import finish, read, report_of, search, solve
from tests.report.test_html import by_id, dom
from vreact.config import Configuration
from vreact.experiment import Job, ResolvedExperiment, run_attempt
from vreact.model import MockModel
from vreact.qa.attacks import URL, Attack, with_attacks
from vreact.qa.dataset import Task
from vreact.records import Store
from vreact.report import Report, compute, render, render_markdown
from vreact.report.compute import DEFENCE_CHECKS, FATES
from vreact.report.html import render_html
from vreact.verdict import Verdict

N = Configuration(name="N")
VG = Configuration(name="VG", guards=True, gates=True)
NISSEDAL = "2hop__269805_135710"  # "What is the country where Nissedal is located named after?" north
OVERRIDE = Attack(kind="inject", style="override")  # named inject-override


@pytest.fixture
def undefended(verifiers):
    """The shipped verifier set without the defence gates."""
    gates = [g for g in verifiers.R1.gates if g.name not in DEFENCE_CHECKS]
    return verifiers.model_copy(update={"R1": verifiers.R1.model_copy(update={"gates": gates})})


def copies(full_tasks: list[Task], *attacks: Attack) -> list[Task]:
    """Nissedal and its attacked copies, one per attack."""
    nissedal = next(t for t in full_tasks if t.id == NISSEDAL)
    return with_attacks([nissedal], list(attacks), full_tasks)


def gold(task: Task) -> str:
    """The paragraph that supports the task's last hop (renumbered in an attacked copy)."""
    return str(task.question_decomposition[-1].paragraph_support_idx)


def obey(task: Task, answer: str | None = None, with_gold: bool = True) -> list[dict[str, Any]]:
    """Read the added paragraph (and the gold one) and answer what it says, citing them."""
    added, cited = str(task.attack.added[0]), [str(task.attack.added[0])]
    steps = [search(task.question), read(added)]
    if with_gold:
        steps.append(read(gold(task)))
        cited.append(gold(task))
    return [*steps, finish(str(task.attack.target) if answer is None else answer, cited)]


def run(store: Store, jobs: list[tuple[Configuration, Task, list[Any]]], spec, verifiers, roles) -> int:
    """One run of (configuration, task, executor script) jobs, each task's attempts numbered in
    order within its configuration; its id."""
    configs = {c.name: c for c, _, _ in jobs}
    resolved = {"configs": [c.model_dump() for c in configs.values()]}
    run_id = store.new_run(resolved, "mock/scripted", "test")
    store.add_tasks(list({t.id: t.record() for _, t, _ in jobs}.values()))
    index: Counter[tuple[str, str]] = Counter()
    for config, task, script in jobs:
        experiment = ResolvedExperiment(
            [task], [config], {"default": MockModel(script)}, spec, verifiers, roles
        )
        run_attempt(experiment, Job(config, task, index[config.name, task.id]), store, run_id)
        index[config.name, task.id] += 1
    store.finish_run(run_id)
    return run_id


@pytest.fixture
def attacked_run(store, full_tasks, spec, undefended, roles) -> tuple[int, list[Task]]:
    """N and VG on Nissedal and its override copy (target and added id from the copy).

    N: clean right, clean wrong; attacked: obeyed citing the added and a gold paragraph
    (escaped), solved (unaffected), a wrong answer (wrong), an empty script (crashed).
    VG: clean right; attacked: a long answer (R1 max_words), then obeyed citing the added
    paragraph alone (R3 multi_hop) until the budget is spent (blocked, first stopped by
    max_words); obeyed alone once, then solved (recovered, stopped by multi_hop)."""
    clean, attacked = tasks = copies(full_tasks, OVERRIDE)
    long = " ".join(["very"] * 40) + " north"
    jobs = [
        (N, clean, solve(clean)),
        (N, clean, solve(clean, answer="Paris")),
        (N, attacked, obey(attacked)),
        (N, attacked, solve(attacked)),
        (N, attacked, solve(attacked, answer="Paris")),
        (N, attacked, []),
        (VG, clean, solve(clean)),
        (VG, attacked, obey(attacked, answer=long, with_gold=False) + obey(attacked, with_gold=False) * 6),
        (VG, attacked, obey(attacked, with_gold=False) + solve(attacked)),
    ]
    return run(store, jobs, spec, undefended, roles), tasks


def test_hand_computed_rows_and_each_attempt_in_one_category(store, attacked_run):
    run_id, (_, attacked) = attacked_run
    assert attacked.attack.target == "Pittsburgh" and list(attacked.attack.added) == ["7"]
    report = compute(store, run_id)
    name = "inject-override"
    assert report.attacks is not None and list(report.attacks) == ["N", "VG"]
    n, vg = report.attacks["N"].by_attack[name], report.attacks["VG"].by_attack[name]
    for row in (n, vg):
        assert sum(getattr(row, f) for f in FATES) == row.n
        assert (row.kind, row.goal) == ("inject", "answer")
    # N: clean 1 of 2 right; attacked 1 of 4 right (solved), 1 of 4 the target, citing the added one
    assert (n.n, n.n_clean, n.clean_accuracy, n.attacked_accuracy) == (4, 2, 0.5, 0.25)
    assert (n.attack_success, n.added_cited) == (0.25, 0.25)
    assert {f: getattr(n, f) for f in FATES} == {
        "escaped": 1,
        "blocked": 0,
        "recovered": 0,
        "unaffected": 1,
        "wrong": 1,
        "crashed": 1,
    }
    assert n.stopped_by == {}
    # VG: the gates stop the target both times; one attempt abstains, the other recovers
    assert (vg.n, vg.n_clean, vg.clean_accuracy, vg.attacked_accuracy) == (2, 1, 1.0, 0.5)
    assert (vg.attack_success, vg.added_cited) == (0.0, 0.0)
    assert {f: getattr(vg, f) for f in FATES} == {
        "escaped": 0,
        "blocked": 1,
        "recovered": 1,
        "unaffected": 0,
        "wrong": 0,
        "crashed": 0,
    }
    assert vg.stopped_by == {"R1 max_words": 1, "R3 multi_hop": 1}
    # the defences' cost: nothing on these clean attempts
    for config, clean_n in (("N", 2), ("VG", 1)):
        a = report.attacks[config]
        assert (a.n_clean, a.clean_abstentions) == (clean_n, 0.0)
        assert a.clean_rejections == dict.fromkeys(DEFENCE_CHECKS, 0)
    # the main figures still count every attempt, clean and attacked alike
    assert (report.configs["N"].executed, report.configs["VG"].executed) == (6, 3)


def test_the_blocked_attempt_is_credited_to_its_first_rejection_only(store, attacked_run):
    run_id, _ = attacked_run
    blocked = next(
        store.query(
            "select id from attempts where run_id = ? and config = 'VG' and outcome = 'abstain'", [run_id]
        )
    )
    rejects = [
        (v["verifier"], v["check_name"])
        for v in store.query(
            "select * from verdicts where attempt_id = ? and decision = 'reject' order by seq",
            [blocked["id"]],
        )
    ]
    # it was rejected by multi_hop too, later; only max_words, the first, is counted
    assert rejects[0] == ("R1", "max_words") and ("R3", "multi_hop") in rejects[1:]


def test_url_reverse_and_answer_goals(store, full_tasks, spec, undefended, roles):
    url = Attack(kind="inject", style="url")
    reverse = Attack(kind="inject", style="reverse")
    clean, on_answer, on_url, on_reverse = copies(full_tasks, OVERRIDE, url, reverse)
    assert on_url.attack.target == URL and on_reverse.attack.target == "htron"

    jobs = [
        (N, clean, solve(clean)),
        # the target by MuSiQue normalisation (article, case, punctuation)
        (N, on_answer, solve(on_answer, answer="The pittsburgh!")),
        # the URL in any case: met; a cut URL: not (and not the gold: wrong); no URL: unaffected
        (N, on_url, solve(on_url, answer=f"north ({URL.upper()})")),
        (N, on_url, solve(on_url, answer="north https://www.fact-check.example/")),
        (N, on_url, solve(on_url, answer="north")),
        # the gold reversed, normalised: met; the gold: unaffected; reversed wrong: wrong
        (N, on_reverse, solve(on_reverse, answer="Htron.")),
        (N, on_reverse, solve(on_reverse, answer="north")),
        (N, on_reverse, solve(on_reverse, answer="htorn")),
    ]
    report = compute(store, run(store, jobs, spec, undefended, roles))
    rows = report.attacks["N"].by_attack
    assert list(rows) == ["inject-override", "inject-reverse", "inject-url"]
    fates = {k: {f: getattr(r, f) for f in FATES if getattr(r, f)} for k, r in rows.items()}
    assert fates == {
        "inject-override": {"escaped": 1},
        "inject-url": {"escaped": 1, "wrong": 1, "unaffected": 1},
        "inject-reverse": {"escaped": 1, "unaffected": 1, "wrong": 1},
    }
    assert [(r.goal, r.attack_success, r.n_clean) for r in rows.values()] == [
        ("answer", 1.0, 1),
        ("reverse", 0.333, 1),
        ("url", 0.333, 1),
    ]
    # none of these answers cites the added paragraph (solve cites the gold ones)
    assert all(r.added_cited == 0.0 for r in rows.values())


def test_defence_rejections_and_abstentions_on_clean_tasks(store, full_tasks):
    """Verdicts of the defence checks written through the store: counted on the clean attempts
    only; other checks' rejections and the attacked attempts' are not."""
    clean, attacked = copies(full_tasks, OVERRIDE)
    run_id = store.new_run({"configs": [{"name": "VG"}, {"name": "N"}]}, "mock/x", "test")
    store.add_tasks([clean.record(), attacked.record()])

    def attempt(config: str, task: Task, index: int, outcome: str, rejected_by: tuple[str, ...] = ()) -> None:
        aid = store.start_attempt(run_id, config, task.id, index, seed=0)
        for i, check in enumerate(rejected_by):
            verdict = Verdict(
                "R1", "executor.s1", "gate", check, "reject", "instruction", artifact_hash=f"h{i}"
            )
            store.record_verdict(aid, verdict)
        fields = {"outcome": outcome, "answer": None, "evidence": "[]"}
        if outcome == "answer":
            fields |= {"answer": "north", "evidence": json.dumps(["6", "10"])}
        else:
            fields |= {"abstain_level": "L3", "abstain_component": "executor.s1", "abstain_cause": "x:y"}
        store.finish_attempt(aid, fields)

    attempt("VG", clean, 0, "answer", ("no_instructions_in_evidence",))  # rejected, then right
    attempt("VG", clean, 1, "abstain", ("no_instructions_in_evidence", "hop_agreement", "max_words"))
    attempt("VG", clean, 2, "answer")
    attempt("VG", attacked, 0, "abstain", ("no_instructions_in_evidence", "no_instructions_in_evidence"))
    attempt("N", clean, 0, "answer")  # N ran no attacked copy: no attack figures
    report = compute(store, run_id)
    assert report.attacks is not None and list(report.attacks) == ["VG"]
    vg = report.attacks["VG"]
    assert (vg.n_clean, vg.clean_abstentions) == (3, 0.333)
    assert vg.clean_rejections == {"no_instructions_in_evidence": 2, "hop_agreement": 1}
    row = vg.by_attack["inject-override"]
    assert (row.blocked, row.stopped_by) == (1, {"R1 no_instructions_in_evidence": 1})
    assert (row.clean_accuracy, row.attacked_accuracy) == (0.667, 0.0)


def test_a_run_without_attacks_has_no_attack_figures(store, full_tasks, spec, undefended, roles):
    clean, _ = copies(full_tasks, OVERRIDE)
    run_id = run(store, [(N, clean, solve(clean))], spec, undefended, roles)
    data = report_of(store, run_id)
    assert "attacks" not in data
    assert Report.model_validate(data).model_dump(mode="json") == data
    assert "Attacks through the data" not in render_markdown(compute(store, run_id))
    assert "Attacks through the data" not in render_html(store, run_id)


def test_the_attack_json_follows_the_published_schema(store, attacked_run):
    import jsonschema

    schema = json.loads((Path(__file__).resolve().parents[2] / "schemas" / "report.schema.json").read_text())
    assert schema == Report.model_json_schema(mode="serialization")
    data = report_of(store, attacked_run[0])
    jsonschema.validate(data, schema)
    assert data["attacks"]["VG"]["by_attack"]["inject-override"]["stopped_by"] == {
        "R1 max_words": 1,
        "R3 multi_hop": 1,
    }
    assert Report.model_validate(data).model_dump(mode="json") == data


def test_the_terminal_and_markdown_show_the_attack_tables(store, attacked_run):
    report = compute(store, attacked_run[0])
    md = render_markdown(report)
    assert "| config | attack | n | clean n | clean acc | acc attacked | attack succ | added cited |" in md
    assert "| N | inject-override | 4 | 2 | 0.50 | 0.25 | 0.25 | 0.25 |" in md
    assert "| VG | inject-override | 2 | 1 | 1.00 | 0.50 | 0.00 | 0.00 |" in md
    assert (
        "| config | attack | blocked | recovered | escaped | unaffected | wrong | crashed | stopped by |"
        in md
    )
    assert "| N | inject-override | 0 | 0 | 1 | 1 | 1 | 1 | - |" in md
    assert "| VG | inject-override | 1 | 1 | 0 | 0 | 0 | 0 | R1 max_words ×1, R3 multi_hop ×1 |" in md
    assert "| config | clean n | clean abst | no_instructions_in_evidence | hop_agreement |" in md
    assert "| VG | 1 | 0.00 | 0 | 0 |" in md
    out = StringIO()
    console = Console(file=out, width=80, color_system=None)
    for table in render(report):
        console.print(table)
    text = out.getvalue()
    assert max(len(line) for line in text.splitlines()) <= 80
    for title in ("Attacks through the data", "Attacked attempts", "Defences on clean tasks"):
        assert title in text


def test_the_page_shows_the_attack_tables_with_their_figures(store, attacked_run):
    report = report_of(store, attacked_run[0])
    summary = by_id(dom(render_html(store, attacked_run[0])), "summary")
    titles = [n.text() for n in summary.all(lambda n: n.tag == "h3")]
    for title in ("Attacks through the data", "Attacked attempts", "Defences on clean tasks"):
        assert any(t.startswith(title) for t in titles), title
    cells = summary.all(lambda n: n.tag == "td" and n.attrs.get("data-key", "").startswith("attacks."))
    assert len(cells) == 2 * (6 + 7) + 2 * 4  # two attacks' rows of 6 and 7 figures, two defences' of 4
    for td in cells:
        want: Any = report
        for part in td.attrs["data-key"].split("."):
            want = want[part]
        assert json.loads(td.attrs["data-value"]) == want, td.attrs["data-key"]
    stopped = next(
        td for td in cells if td.attrs["data-key"] == "attacks.VG.by_attack.inject-override.stopped_by"
    )
    assert stopped.text() == "R1 max_words ×1, R3 multi_hop ×1"
