"""A second task family with no edit to the core for it (tests/families/arith.py: arithmetic word
problems, a calc tool, the gate ``computed`` and a scorer), run through the real command line
in a subprocess against a loopback OpenAI-compatible server: loaded with ``--plugin`` and
from an installed package's entry point; N and VG; the report with the family's own metrics;
the HTML view; a SIGKILL and a resume; and the bad inputs a family brings."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.fakes.scripted_server import ScriptedServer
from tests.helpers import cli, installed_plugin
from tests.processes import start
from vreact.origin import origins_in
from vreact.records import DB_NAME, read_run

DATA = REPO / "tests" / "data" / "arith"
PLUGIN = "tests.families.arith"
#: What the scripted model computes for each problem (by a word of its text), and the problem
#: on which it first finishes with a number it never computed (the gate's to stop).
EXPRESSIONS = {
    "apples": "3*4-2",
    "train": "60*2.5",
    "teams": "28/4",
    "change": "10-5*1.2",
    "sheep": "12+2*12",
    "pages": "240/30",
}
TRAP = "teams"


def reply(body: dict[str, Any]) -> str:
    """The executor's next step, a function of its prompt alone: on the trap problem a first try
    that finishes with a number it never computed; otherwise calc, then finish with its value."""
    prompt = body["messages"][-1]["content"]
    word = next(w for w in EXPRESSIONS if w in prompt)
    values = re.findall(r"-> = (\S+)", prompt)
    if values:
        return json.dumps({"thought": "done", "action": "finish", "input": values[-1]})
    if word == TRAP and "rejected" not in prompt:
        return json.dumps({"thought": "guess", "action": "finish", "input": "6"})
    return json.dumps({"thought": "compute", "action": "calc", "input": EXPRESSIONS[word]})


@pytest.fixture
def server():
    with ScriptedServer(reply) as s:
        yield s


def run_args(base_url: str, out: Path, *extra: str, plugin: bool = True) -> list[str]:
    return [
        "run",
        *("--dataset", str(DATA / "problems.jsonl"), "--family", "arith"),
        *(("--plugin", PLUGIN) if plugin else ()),
        *("--spec", str(DATA / "spec.yaml"), "--verifiers", str(DATA / "verifiers.yaml")),
        *("--configs", "N,VG", "--model", "openai/arith", "--base-url", base_url),
        *("--no-cache", "--concurrency", "1", "--out", str(out), *extra),
    ]


vreact = cli  # the command line in a subprocess, the repository on its path


def rows(out: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(out / DB_NAME) as conn:
        return conn.execute(sql).fetchall()


def test_the_family_runs_n_and_vg_and_reports_its_own_metrics(server, tmp_path):
    out = tmp_path / "run"
    done = vreact(*run_args(server.base_url, out))
    assert done.returncode == 0, done.stderr[-3000:]
    assert rows(out, "select family, family_version from runs") == [("arith", "0.1")]
    assert {r[0] for r in rows(out, "select family from tasks")} == {"arith"}
    # every attempt ended and was scored by the family's scorer when it did
    outcomes = dict(rows(out, "select config || ':' || task_id, outcome from attempts"))
    assert len(outcomes) == 12 and set(outcomes.values()) == {"answer"}
    scores = dict(
        rows(
            out,
            "select a.config || ':' || a.task_id, s.correct"
            " from attempts a join scores s on s.attempt_id = a.id",
        )
    )
    assert scores["N:arith-3"] == 0  # N takes the guess as it is: a silent error
    assert scores["VG:arith-3"] == 1  # VG's gate rejected it; the retry computed the answer
    assert sum(scores.values()) == 11
    rejected = rows(out, "select check_name, cause from verdicts where decision = 'reject'")
    assert rejected == [("computed", "not_computed")]
    report = json.loads(vreact("report", str(out), "--json").stdout)
    assert report["family"] == "arith"
    n, vg = report["configs"]["N"], report["configs"]["VG"]
    assert (n["correct"], n["silent_error"], vg["correct"], vg["silent_error"]) == (5, 1, 6, 0)
    assert n["family_metrics"] == {"abs_error": 0.167, "exact": 0.833}  # the guess, 6, is 1 off
    assert vg["family_metrics"] == {"abs_error": 0.0, "exact": 1.0}
    assert n["em"] is None and n["support_f1"] is None  # question answering's metrics: not this family's
    assert vg["corrections"]["gate"] == 1
    text = vreact("report", str(out)).stdout
    assert "Family metrics" in text and re.search(r"N\s+exact\s+0\.83", text)
    view = vreact("view", str(out), "--out", str(tmp_path / "page.html"))
    assert view.returncode == 0, view.stderr
    assert "Family metrics" in (tmp_path / "page.html").read_text()
    check = vreact("check", str(out))
    assert check.returncode == 0, check.stdout + check.stderr
    # diagnose's audit words the task as any task's, not as a question over paragraphs
    audit = ("diagnose", str(out), "--judge", "openai/arith", "--base-url", server.base_url, "--sample", "2")
    diagnosed = vreact(*audit)
    assert diagnosed.returncode == 0, diagnosed.stderr[-2000:]
    audits = [c for a in read_run(out).attempts for c in a.calls if c.role == "diagnosis"]
    assert len(audits) == 2
    for call in audits:
        system, user = (m["content"] for m in call.messages or [])
        assert "a task the agent worked on with its tools" in system and "paragraph" not in system
        assert user.startswith("Task: ")
    # replayed with its own verifier set: every verdict the same, and N's guess, which N took as it
    # was, rejected post hoc by R3's computed
    replay = vreact("replay", str(out), "--plugin", PLUGIN, "--out", str(tmp_path / "replay"), "--json")
    assert replay.returncode == 0, replay.stderr[-3000:]
    replayed = {c["config"]: c for c in json.loads(replay.stdout)["configs"]}
    assert replayed["N"]["as_run"]["silent_errors"] == 1 and replayed["N"]["post_hoc"]["silent_errors"] == 0
    assert (replayed["N"]["rejected_wrong"], replayed["N"]["rejected_right"]) == (1, 0)
    assert replayed["VG"]["post_hoc"] == replayed["VG"]["as_run"]
    assert rows(tmp_path / "replay", "select family from runs") == [("arith",)]


def test_the_family_is_probed_on_its_own_fault_classes(tmp_path):
    """``vreact probe`` builds the family's classes from its records (no model), checks each with
    the family's verifier set, and reads the roles the probe recorded; report and view show it."""
    listing = vreact("probe", "--plugin", PLUGIN, "--family", "arith", "--list")
    assert listing.returncode == 0, listing.stderr
    assert [line.split()[0] for line in listing.stdout.splitlines()] == [
        "gold",
        "gold_written_out",
        "uncomputed",
        "off_by_one",
        "in_words",
    ]
    out = tmp_path / "probe"
    args = [
        "probe",
        *("--plugin", PLUGIN, "--family", "arith", "--dataset", str(DATA / "problems.jsonl")),
        *("--spec", str(DATA / "spec.yaml"), "--verifiers", str(DATA / "verifiers.yaml")),
        *("--out", str(out), "--json"),
    ]
    refused = vreact(*args[:-3], "--out", str(tmp_path / "made"), "--made", "10")
    assert refused.returncode == 2 and "--made: the arith family cannot compare candidates" in refused.stderr
    assert "Traceback" not in refused.stderr and not (tmp_path / "made").exists()
    done = vreact(*args)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    classes = {c["fault_class"]: c for c in report["classes"]}
    assert {name: c["role"] for name, c in classes.items()} == {
        "gold": "gold",
        "gold_written_out": "control",
        "uncomputed": "fault",
        "off_by_one": "fault",
        "in_words": "fault",
    }
    assert all(c["artifacts"] == 6 for c in classes.values())
    # the gold and the control pass every gate; every fault is caught by a gate
    assert classes["gold"]["escaped"] == classes["gold_written_out"]["escaped"] == 6
    for fault in ("uncomputed", "off_by_one", "in_words"):
        assert (classes[fault]["caught_by_gate"], classes[fault]["escaped"]) == (6, 0), fault
    assert report["false_rejections"] == []
    assert rows(out, "select family from runs") == [("arith",)]
    assert {r[0] for r in rows(out, "select family from tasks")} == {"arith"}
    # the probe's folder is read back without the plugin: report and view
    again = vreact("report", str(out), "--json")
    assert again.returncode == 0, again.stderr
    assert {c["fault_class"]: c["role"] for c in json.loads(again.stdout)["classes"]}["gold"] == "gold"
    view = vreact("view", str(out), "--out", str(tmp_path / "probe.html"))
    assert view.returncode == 0, view.stderr
    assert "uncomputed" in (tmp_path / "probe.html").read_text()
    # the same probe again resumes: nothing new is checked
    assert vreact(*args).returncode == 0
    assert rows(out, "select count(*) from attempts") == [(30,)]


def test_the_family_loads_from_an_installed_packages_entry_point(server, tmp_path):
    """The family's module, installed as a package in a venv that sees this one's packages,
    registers through the entry-point group vreact.plugins: no --plugin names it."""
    source = (REPO / "tests" / "families" / "arith.py").read_text()
    python = installed_plugin(tmp_path, "arith-ep", "2.0.1", "arith_ep", source)
    listed = vreact("plugins", python=str(python), cwd=tmp_path)
    listing = "family   arith                    plugin arith 2.0.1 (entry point)"
    assert listing in listed.stdout, listed.stdout
    out = tmp_path / "run"
    done = vreact(*run_args(server.base_url, out, plugin=False), python=str(python), cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert rows(out, "select count(*), sum(correct) from scores") == [(12, 11)]


def test_a_killed_run_of_the_family_resumes(tmp_path):
    """SIGKILL mid-run, then the same command: every attempt ends once, as in a whole run."""
    with ScriptedServer(reply, latency=0.15) as server:
        out = tmp_path / "run"
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        log = (tmp_path / "log.txt").open("w")
        p = start(
            [sys.executable, "-m", "vreact.cli", *run_args(server.base_url, out)],
            cwd=REPO,
            env=env,
            stdout=log,
            stderr=log,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and p.poll() is None:
            try:  # never made by this poll: the run makes it
                if (out / DB_NAME).exists() and rows(out, "select count(*) from scores")[0][0] >= 3:
                    break
            except sqlite3.OperationalError:  # not made yet
                pass
            time.sleep(0.05)
        assert p.poll() is None, (tmp_path / "log.txt").read_text()[-3000:]
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=30)
        killed_at = rows(out, "select count(*) from scores")[0][0]
        assert 3 <= killed_at < 12
        done = vreact(*run_args(server.base_url, out))
        assert done.returncode == 0, done.stderr[-3000:]
    assert rows(out, "select count(*), sum(correct) from scores") == [(12, 11)]
    assert rows(out, "select count(*) from attempts") == [(12,)]
    assert rows(out, "select count(*) from runs") == [(1,)]
    check = vreact("check", str(out))
    assert check.returncode == 0, check.stdout + check.stderr


def test_its_gold_is_tagged_and_never_in_a_prompt(server, tmp_path):
    """The gold number is tagged gold when read (the assembler refuses it to every role), and no
    prompt before the first calc holds it."""
    import tests.families.arith as arith

    [problem, *_] = arith.Arithmetic().read(str(DATA / "problems.jsonl"), "jsonl")
    assert list(origins_in(problem.answer)) == ["gold"]
    out = tmp_path / "run"
    assert vreact(*run_args(server.base_url, out)).returncode == 0
    golds = {
        json.loads(line)["question"]: json.loads(line)["answer"] for line in (DATA / "problems.jsonl").open()
    }
    first = [m for m in server.requests if "->" not in m["messages"][-1]["content"]]
    assert first
    for body in first:
        prompt = "\n".join(m["content"] for m in body["messages"])
        [question] = [q for q in golds if q in prompt]
        assert not re.search(rf"\b{re.escape(golds[question])}\b", prompt.replace(question, "")), prompt


def test_the_context_schema_runs_over_its_attempts(tmp_path, monkeypatch):
    """A gated and judged attempt of the family builds every role's context through the
    assembler under memory/roles.yaml (none holds a gold value), and its gold, planted in one,
    is refused."""
    import tests.families.arith as arith
    from tests.helpers import by_role, judged
    from vreact.config import Configuration
    from vreact.experiment import ResolvedExperiment
    from vreact.experiment.attempt import Job, run_attempt
    from vreact.memory import ContextAssembler, ContextSchemaError, Scope
    from vreact.records import Store
    from vreact.spec import load_roles, load_spec, load_verifiers

    family = arith.Arithmetic()
    [problem, *_] = family.read(str(DATA / "problems.jsonl"), "jsonl")
    built: dict[str, list[dict[str, Any]]] = {}
    build = ContextAssembler.build

    def spying(self, role, scope):
        out = build(self, role, scope)
        built.setdefault(role, []).append(out)
        return out

    monkeypatch.setattr(ContextAssembler, "build", spying)
    judged_set = tmp_path / "verifiers.yaml"  # the family's set, with R1's and R3's judges
    judged_set.write_text(
        "kind: verifiers\nname: arith-judged\nplan: {gates: []}\n"
        "R1: {gates: [non_empty, computed], judge: {}}\nR2: {gates: []}\n"
        "R3: {gates: [computed, abstention_allowed], judge: {}}\n"
    )
    spec, verifiers, roles = load_spec(str(DATA / "spec.yaml")), load_verifiers(str(judged_set)), load_roles()
    steps = [
        json.dumps({"thought": "compute", "action": "calc", "input": "3*4-2"}),
        json.dumps({"thought": "done", "action": "finish", "input": "10"}),
    ]
    model = by_role(executor=steps, judge=[json.dumps(judged())] * 2)
    store = Store(tmp_path / DB_NAME)
    run_id = store.new_run({}, model.name, "arith", family.record())
    store.add_tasks([family.row(problem)])
    config = Configuration(name="VGJ", gates=True, judges=True)
    models = {"default": model}
    experiment = ResolvedExperiment([problem], [config], models, spec, verifiers, roles, family="arith")
    outcome = run_attempt(experiment, Job(config, problem), store, run_id)
    assert (outcome.kind, outcome.answer) == ("answer", "10")
    assert set(built) == {"designer", "executor", "judge", "controller"}
    assert len(built["judge"]) == 2  # R1's and R3's
    for contexts in built.values():
        assert all("gold" not in set(origins_in(c)) for c in contexts)
    planted = {"subtask.objective": problem.text, "try.steps": [("thought", problem.answer)]}
    leak = Scope(1, ("executor.s1",), planted)
    with pytest.raises(ContextSchemaError, match="'gold'"):
        ContextAssembler(roles, store).build("executor", leak)
    store.close()


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        (
            "--family",
            "arithmetic",
            "error: --family: unknown task family 'arithmetic'; did you mean 'arith'?"
            " (known: arith, code, gsm8k, qa)",
        ),
        ("--format", "csv", "error: --format: the arith family reads no format 'csv' (its formats: jsonl)"),
    ],
)
@pytest.mark.parametrize("command", ["run", "probe"])
def test_a_bad_family_or_format_is_one_line_and_creates_nothing(tmp_path, command, flag, value, message):
    out = tmp_path / "run"
    args = run_args("http://127.0.0.1:9/v1", out)
    if command == "probe":  # the same dataset flags, on a probe
        args = ["probe", *args[1:7], "--out", str(out)]
    if flag == "--family":
        args[args.index("--family") + 1] = value
    else:
        args += [flag, value]
    done = vreact(*args)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [message], done.stderr
    assert not out.exists()


def test_a_qa_setting_on_a_probe_of_another_family_is_one_line(tmp_path):
    corpus = REPO / "tests" / "data" / "musique" / "musique_ans_train_100_corpus.json"
    out = tmp_path / "probe"
    args = ["probe", "--plugin", PLUGIN, "--family", "arith", "--dataset", str(DATA / "problems.jsonl")]
    done = vreact(*args, "--corpus", str(corpus), "--out", str(out))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == ["error: --corpus: a setting of the qa family, not of 'arith'"]
    assert not out.exists()


def test_a_qa_setting_on_another_family_is_refused_naming_its_line(tmp_path):
    experiment = tmp_path / "arith.yaml"
    experiment.write_text(
        f"kind: experiment\nname: arith\nplugins: [{PLUGIN}]\n"
        f"dataset:\n  family: arith\n  path: {DATA / 'problems.jsonl'}\n  hops: [2]\n"
        f"spec: {DATA / 'spec.yaml'}\nverifiers: {DATA / 'verifiers.yaml'}\n"
        "configurations:\n  - {name: N}\nmodels: {default: openai/arith}\n"
        "base_url: http://127.0.0.1:9/v1\n"
    )
    done = vreact("experiment", str(experiment), "--out", str(tmp_path / "run"))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"error: {experiment}:7: dataset.hops: a setting of the qa family, not of 'arith'"
    ], done.stderr
    assert not (tmp_path / "run").exists()


def test_a_qa_step_setting_on_another_familys_configuration_is_refused_naming_its_line(tmp_path):
    experiment = tmp_path / "arith.yaml"
    experiment.write_text(
        f"kind: experiment\nname: arith\nplugins: [{PLUGIN}]\n"
        f"dataset:\n  family: arith\n  path: {DATA / 'problems.jsonl'}\n"
        f"spec: {DATA / 'spec.yaml'}\nverifiers: {DATA / 'verifiers.yaml'}\n"
        "configurations:\n  - name: N\n  - name: VG\n    finish: hops\n"
        "models: {default: openai/arith}\nbase_url: http://127.0.0.1:9/v1\n"
    )
    done = vreact("experiment", str(experiment), "--out", str(tmp_path / "run"))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"error: {experiment}:12: configurations.1.finish: a setting of the qa family's steps, not of 'arith'"
    ], done.stderr
    assert not (tmp_path / "run").exists()


def test_a_family_plugin_that_raises_on_load_is_one_line(tmp_path):
    (tmp_path / "broken_family.py").write_text(
        "import vreact\n\n\n@vreact.family\nclass Broken(vreact.TaskFamily):\n    name = 'broken'\n"
    )
    done = vreact(
        "run",
        *("--dataset", str(DATA / "problems.jsonl"), "--family", "broken", "--plugin", "./broken_family.py"),
        *("--configs", "N", "--model", "openai/x", "--base-url", "http://127.0.0.1:9/v1", "--out", "run"),
        cwd=tmp_path,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: plugin './broken_family.py': TypeError: family 'broken' names no record format"
        " (formats = ('...',))"
    ], done.stderr
    assert not (tmp_path / "run").exists()


# --- the family's own settings: declared in its module, no edit to the core -------------------


def own_settings_experiment(
    tmp_path: Path, dataset: str, config: str, base_url: str = "http://127.0.0.1:9/v1"
) -> Path:
    experiment = tmp_path / "arith.yaml"
    experiment.write_text(
        f"kind: experiment\nname: arith\nplugins: [{PLUGIN}]\n"
        f"dataset:\n  family: arith\n  path: {DATA / 'problems.jsonl'}\n{dataset}"
        f"spec: {DATA / 'spec.yaml'}\nverifiers: {DATA / 'verifiers.yaml'}\n"
        f"configurations:\n  - name: VG\n    gates: true\n{config}"
        f"models: {{default: openai/arith}}\nbase_url: {base_url}\nconcurrency: 1\ncache: false\n"
    )
    return experiment


def test_the_familys_own_dataset_and_step_settings_are_read(server, tmp_path):
    """``containing`` (a dataset setting) keeps one problem; ``decimals`` (a step setting)
    reaches the family's kit, typed, through the kit's ``settings``."""
    experiment = own_settings_experiment(
        tmp_path, "  containing: apples\n", "    decimals: 2\n", server.base_url
    )
    out = tmp_path / "run"
    done = vreact("experiment", str(experiment), "--out", str(out))
    assert done.returncode == 0, done.stderr
    records = read_run(out)
    assert list(records.tasks) == ["arith-1"]  # the apples problem alone
    assert all(a.score is not None and a.score.correct for a in records.attempts)
    stored = json.loads(rows(out, "select config_json from runs")[0][0])
    assert stored["configs"][0]["decimals"] == 2  # the run records its family's step setting

    from tests.families import arith
    from vreact.config import Configuration
    from vreact.families import family_of
    from vreact.spec import steps_of

    family = family_of("arith")
    settings = steps_of(family, Configuration(name="VG", decimals=2))
    assert isinstance(settings, arith.Steps) and settings.decimals == 2
    kit = family.kit(None, arith.Designer(()).single_task("10/3"), False, settings)
    assert kit.act(arith.Step(action="calc", input="10/3")) == ("= 3.33", False)


@pytest.mark.parametrize(
    ("dataset", "config", "line", "message"),
    [
        ("  containing: ''\n", "", 7, "dataset.containing: String should have at least 1 character"),
        (
            "  contain: apples\n",
            "",
            7,
            "dataset.contain: unknown field; did you mean 'containing'?",
        ),
        (
            "",
            "    decimals: -1\n",
            12,
            "configurations.0.decimals: Input should be greater than or equal to 0",
        ),
        (
            "",
            "    decimal: 2\n",
            12,
            "configurations.0.decimal: unknown field; did you mean 'decimals'?",
        ),
    ],
)
def test_a_bad_value_of_the_familys_own_setting_is_one_line_with_its_line(
    tmp_path, dataset, config, line, message
):
    experiment = own_settings_experiment(tmp_path, dataset, config)
    done = vreact("experiment", str(experiment), "--out", str(tmp_path / "run"))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [f"error: {experiment}:{line}: {message}"], done.stderr
    assert not (tmp_path / "run").exists()


def test_a_kit_without_settings_still_works_with_one_deprecation_warning():
    """The door before families declared their settings: ``kit(ctx, subtask, retry)``."""
    import warnings

    from tests.families import arith
    from vreact.config import Configuration
    from vreact.families import open_kit

    class OldDoor(arith.Arithmetic):
        name = "arith-old-door"

        def kit(self, ctx: Any, subtask: Any, retry: bool) -> Any:  # type: ignore[override]
            return arith.CalcKit(subtask)

    class Ctx:
        steps = arith.Steps()
        config = Configuration(name="N")

    subtask = arith.Designer(()).single_task("1+1")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kits = [open_kit(OldDoor(), Ctx(), subtask, False) for _ in range(3)]
    assert all(isinstance(k, arith.CalcKit) for k in kits)
    assert [str(w.message) for w in caught if w.category is DeprecationWarning] == [
        "family 'arith-old-door': kit(ctx, subtask, retry) is deprecated; take the step settings too,"
        " kit(ctx, subtask, retry, settings) (docs/families.md, Migrating a family)"
    ]


@pytest.mark.parametrize("command", ["run", "probe"])
def test_a_family_without_a_default_spec_never_gets_musiques(tmp_path, command):
    """No ``default_spec``: a run or probe of its records names its spec, or is refused in one line."""
    args = [command, "--plugin", PLUGIN, "--family", "arith", "--dataset", str(DATA / "problems.jsonl")]
    if command == "run":
        args += ["--configs", "N", "--model", "openai/arith", "--base-url", "http://127.0.0.1:9/v1"]
    done = vreact(*args, "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    said = (
        "name its spec (an experiment's spec: FILE, or --spec FILE)"
        if command == "run"
        else "give --spec FILE"
    )
    assert done.stderr.strip().splitlines() == [
        f"error: --spec: the arith family has no default spec: {said}"
    ], done.stderr
    assert not (tmp_path / "out").exists()


def test_the_schema_command_gives_a_plugin_familys_settings_a_branch(tmp_path):
    import jsonschema

    out = tmp_path / "schemas"
    done = vreact("schema", "--plugin", PLUGIN, "--write", str(out))
    assert done.returncode == 0, done.stderr
    schema = json.loads((out / "experiment.schema.json").read_text())
    titles = [b["title"] for b in schema["properties"]["dataset"]["anyOf"]]
    assert titles == [f"a dataset of the {f} family" for f in ("arith", "code", "gsm8k", "qa")]
    shipped = json.loads((REPO / "schemas" / "experiment.schema.json").read_text())
    assert "arith" not in json.dumps(shipped["properties"]["dataset"])  # the shipped: built-in families only
    validator = jsonschema.Draft202012Validator(schema)
    body = {
        "kind": "experiment",
        "name": "a",
        "dataset": {"family": "arith", "path": "p.jsonl", "containing": "x"},
    }
    assert validator.is_valid({**body, "configurations": [{"name": "VG", "gates": True, "decimals": 2}]})
    assert not validator.is_valid({**body, "configurations": [{"name": "VG", "decimalz": 2}]})
    assert not validator.is_valid({**body, "configurations": [{"name": "VG", "decimals": -1}]})
    spec = json.loads((out / "spec.schema.json").read_text())
    assert [b["title"] for b in spec["anyOf"]] == [
        f"a spec of the {f} family" for f in ("arith", "code", "gsm8k", "qa")
    ]
