"""The probe's tables, computed from its records alone (``vreact probe`` prints them, ``vreact
report`` and ``vreact view`` show them again): per check and class, the catch rate alone and the
share stopped first in order; per check, its false rejections of gold and controls; per class,
what a gate caught, what only a judge caught, what escaped; with a judge, its catch rate and
false rejections on what the gates passed, and its calls and tokens."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel

from vreact.families import DEFAULT, UnknownFamily, family_of
from vreact.records import Store

Role = Literal["gold", "control", "fault"]


class CheckClass(BaseModel):
    """One check on one class: on how many of its artifacts it ran, how many it rejected alone,
    and how many it stopped first when the checks run in the controller's order."""

    verifier: str
    check: str
    source: Literal["gate", "judge"]
    fault_class: str
    checked: int
    rejected: int
    catch_rate: float | None
    first: int
    first_share: float | None


class CheckRow(BaseModel):
    """One check over every class: how often it ran and rejected, its false rejections (of gold
    and controls), and its mean time per artifact in microseconds."""

    verifier: str
    check: str
    source: Literal["gate", "judge"]
    checked: int
    rejected: int
    false_rejections: int
    mean_us: float | None


class FalseRejection(BaseModel):
    """A gold or control artifact a check rejected; ``audit``: what the dataset audit lists on
    its task (each a stated example the task's own gold contradicts, and what the gold gives):
    where it lists one, the rejection is the dataset's, not the gate's."""

    verifier: str
    check: str
    source: str
    fault_class: str
    task_id: str
    cause: str
    detail: str
    audit: list[str] = []


class ClassRow(BaseModel):
    """One class: its artifacts, the records that could not yield one (and why), and what became
    of them: caught by some gate, caught by a judge alone, escaped every check."""

    fault_class: str
    role: Role
    artifacts: int
    skipped: dict[str, int]
    caught_by_gate: int
    caught_only_by_judge: int
    escaped: int
    crashed: int
    escape_rate: float | None
    example_escape: str | None  # "task id: answer" of the first artifact that escaped


class JudgeRow(BaseModel):
    verifier: str
    judged: int  # artifacts every gate cleared that this judge saw
    faults_judged: int
    caught: int
    catch_rate: float | None  # caught faults over faults judged
    false_rejections: int  # gold and controls it rejected
    calls: int
    prompt_tokens: int
    completion_tokens: int
    #: a judge that shows its work: its rejections' claims as the free check found them (founded,
    #: refuted, unverified), on faults and on gold and controls; zeros where it shows none
    founded_faults: int = 0
    founded_gold: int = 0
    refuted_faults: int = 0
    refuted_gold: int = 0
    unverified_faults: int = 0
    unverified_gold: int = 0


class ProbeReport(BaseModel):
    """``vreact probe --json`` (and ``vreact report --json`` of a probe folder)."""

    kind: Literal["probe"] = "probe"
    run: int
    dataset: str
    tasks: int
    levels: list[str]
    judge: str | None
    classes: list[ClassRow]
    checks: list[CheckRow]
    by_check_and_class: list[CheckClass]
    false_rejections: list[FalseRejection]
    judges: list[JudgeRow]


def is_probe(config: Any) -> bool:
    """Whether a run's stored identity is a probe's."""
    return isinstance(config, dict) and config.get("kind") == "probe"


def role_of(name: str, roles: dict[str, Role] | None = None) -> Role:
    """A class's role: as the probe recorded it (another family's), else question answering's
    (probes made before families record none); a class neither knows is a fault."""
    if roles is not None and name in roles:
        return roles[name]
    return next((c.role for c in family_of(DEFAULT).fault_classes() if c.name == name), "fault")


def compute_probe(store: Store, run_id: int) -> ProbeReport:
    """The probe's tables from its records."""
    run = next(store.query("select config_json, dataset from runs where id = ?", [run_id]))
    identity = json.loads(run["config_json"])
    levels = list(identity.get("levels", []))
    recorded = identity.get("roles")

    def role(name: str) -> Role:
        return role_of(name, recorded)

    attempts = {
        a["id"]: a
        for a in store.query(
            "select id, config, task_id, outcome, answer, abstain_cause, crash_kind from attempts"
            " where run_id = ? and outcome != 'running' order by id",
            [run_id],
        )
    }
    verdicts: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for v in store.query(
        "select v.attempt_id, v.verifier, v.source, v.check_name, v.decision, v.cause, v.detail, v.seconds"
        " from verdicts v join attempts a on a.id = v.attempt_id where a.run_id = ?"
        " order by v.attempt_id, v.seq",
        [run_id],
    ):
        verdicts[v["attempt_id"]].append(v)
    order = _check_order(levels, identity.get("verifiers") or {}, verdicts)
    audit = _audit(store, run_id, identity.get("family") or DEFAULT)
    classes = list(dict.fromkeys([*identity.get("classes", []), *(a["config"] for a in attempts.values())]))
    skipped = _skipped(store, run_id)

    cells: dict[tuple[str, str, str, str], dict[str, int]] = defaultdict(
        lambda: {"checked": 0, "rejected": 0, "first": 0}
    )
    per_check: dict[tuple[str, str, str], dict[str, Any]] = defaultdict(
        lambda: {"checked": 0, "rejected": 0, "false": 0, "seconds": 0.0, "timed": 0}
    )
    per_class: dict[str, dict[str, Any]] = {c: defaultdict(int) for c in classes}
    examples: dict[str, str] = {}
    false: list[FalseRejection] = []
    for aid, a in attempts.items():
        name, vs = a["config"], verdicts.get(aid, [])
        row = per_class.setdefault(name, defaultdict(int))
        row["artifacts"] += 1
        control = role(name) != "fault"
        for v in vs:
            key = (v["verifier"], v["check_name"], v["source"])
            cell, total = cells[(*key, name)], per_check[key]
            cell["checked"] += 1
            total["checked"] += 1
            if v["seconds"] is not None:
                total["seconds"] += v["seconds"]
                total["timed"] += 1
            if v["decision"] == "reject":
                cell["rejected"] += 1
                total["rejected"] += 1
                if control:
                    total["false"] += 1
                    false.append(
                        FalseRejection(
                            verifier=v["verifier"],
                            check=v["check_name"],
                            source=v["source"],
                            fault_class=name,
                            task_id=a["task_id"],
                            cause=v["cause"] or "",
                            detail=v["detail"] or "",
                            audit=audit.get(a["task_id"], []),
                        )
                    )
        rejects = sorted(
            (order.get((v["verifier"], v["check_name"], v["source"]), 1 << 30), v)
            for v in vs
            if v["decision"] == "reject"
        )
        if rejects:
            v = rejects[0][1]
            cells[(v["verifier"], v["check_name"], v["source"], name)]["first"] += 1
        if a["outcome"] == "crash":
            row["crashed"] += 1
        elif any(v["source"] == "gate" and v["decision"] == "reject" for v in vs):
            row["caught_by_gate"] += 1
        elif any(v["decision"] == "reject" for v in vs):
            row["caught_only_by_judge"] += 1
        else:
            row["escaped"] += 1
            examples.setdefault(
                name, f"{a['task_id']}: {a['answer'] if a['answer'] is not None else 'abstain'}"
            )

    judge_rows = _judges(store, run_id, attempts, verdicts, levels, role) if identity.get("judge") else []
    return ProbeReport(
        run=run_id,
        dataset=run["dataset"] or identity.get("dataset", ""),
        tasks=len(identity.get("tasks", [])),
        levels=levels,
        judge=identity.get("judge"),
        classes=[
            ClassRow(
                fault_class=c,
                role=role(c),
                artifacts=per_class[c]["artifacts"],
                skipped=skipped.get(c, {}),
                caught_by_gate=per_class[c]["caught_by_gate"],
                caught_only_by_judge=per_class[c]["caught_only_by_judge"],
                escaped=per_class[c]["escaped"],
                crashed=per_class[c]["crashed"],
                escape_rate=_rate(
                    per_class[c]["escaped"], per_class[c]["artifacts"] - per_class[c]["crashed"]
                ),
                example_escape=examples.get(c),
            )
            for c in classes
        ],
        checks=[
            CheckRow(
                verifier=k[0],
                check=k[1],
                source=k[2],
                checked=t["checked"],
                rejected=t["rejected"],
                false_rejections=t["false"],
                mean_us=round(t["seconds"] / t["timed"] * 1e6, 1) if t["timed"] else None,
            )
            for k, t in sorted(per_check.items(), key=lambda kv: order.get(kv[0], 1 << 30))
        ],
        by_check_and_class=[
            CheckClass(
                verifier=k[0],
                check=k[1],
                source=k[2],
                fault_class=k[3],
                checked=c["checked"],
                rejected=c["rejected"],
                catch_rate=_rate(c["rejected"], c["checked"]),
                first=c["first"],
                first_share=_rate(c["first"], per_class[k[3]]["artifacts"]),
            )
            for k, c in sorted(
                cells.items(), key=lambda kv: (classes.index(kv[0][3]), order.get(kv[0][:3], 1 << 30))
            )
        ],
        false_rejections=false,
        judges=judge_rows,
    )


def _audit(store: Store, run_id: int, family: str) -> dict[str, list[str]]:
    """What the dataset audit lists on each probed task, from the tasks' records as the family
    reads them (nothing for a family that lists nothing, or one not loaded here)."""
    try:
        reader = family_of(family)
    except UnknownFamily:
        return {}
    rows = store.query(
        "select record from tasks where id in (select task_id from attempts where run_id = ?)", [run_id]
    )
    reading = reader.reading([json.loads(r["record"] or "{}") for r in rows])
    out: dict[str, list[str]] = defaultdict(list)
    for f in reading.findings if reading is not None else []:
        out[f.task].append(f"{f.read}: {f.gold}")
    return dict(out)


def _rate(n: int, d: int) -> float | None:
    return round(n / d, 3) if d else None


def _check_order(
    levels: list[str], verifiers: dict[str, Any], verdicts: dict[int, list[dict[str, Any]]]
) -> dict[tuple[str, str, str], int]:
    """Each check's place in the controller's order: by level, each level's gates in the
    verifier set's order, then its judge."""
    keys: list[tuple[str, str, str]] = []
    for level in levels:
        spec = verifiers.get(level) or {}
        keys += [(level, str(g.get("name")), "gate") for g in spec.get("gates", []) if isinstance(g, dict)]
    seen = dict.fromkeys(keys)
    for vs in verdicts.values():  # a check the stored set does not name (a plugin's): last, as met
        for v in vs:
            seen.setdefault((v["verifier"], v["check_name"], v["source"]))
    rank = {lvl: i for i, lvl in enumerate(levels)}
    pos = {k: i for i, k in enumerate(seen)}
    ordered = sorted(seen, key=lambda k: (rank.get(k[0], 99), k[2] == "judge", pos[k]))
    return {k: i for i, k in enumerate(ordered)}


def _skipped(store: Store, run_id: int) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = defaultdict(dict)
    for r in store.query("select class, reason, count from probe_skips where run_id = ?", [run_id]):
        out[r["class"]][r["reason"]] = r["count"]
    return dict(out)


def _judges(
    store: Store,
    run_id: int,
    attempts: dict[int, dict[str, Any]],
    verdicts: dict[int, list[dict[str, Any]]],
    levels: list[str],
    role: Callable[[str], Role] = role_of,
) -> list[JudgeRow]:
    calls: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for c in store.query(
        "select c.attempt_id, c.prompt_tokens, c.completion_tokens from model_calls c"
        " join attempts a on a.id = c.attempt_id where a.run_id = ? and c.role = 'judge' order by c.id",
        [run_id],
    ):
        calls[c["attempt_id"]].append(c)
    rows = []
    for verifier in levels:
        judged = faults = caught = false = 0
        claims: Counter[str] = Counter()
        for aid, a in attempts.items():
            mine = [v for v in verdicts.get(aid, []) if v["source"] == "judge" and v["verifier"] == verifier]
            if not mine:
                continue
            judged += 1
            fault = role(a["config"]) == "fault"
            faults += fault
            rejected = any(v["decision"] == "reject" for v in mine)
            caught += fault and rejected
            false += (not fault) and rejected
            for v in mine:
                kind = _claim(v["cause"] or "")
                if kind:
                    claims[f"{kind}_{'faults' if fault else 'gold'}"] += 1
        # a judge's calls: each attempt's calls in the order its judges ran (R1 before R3)
        n = prompt = completion = 0
        for aid, cs in calls.items():
            ran = [
                lvl
                for lvl in levels
                if any(v["source"] == "judge" and v["verifier"] == lvl for v in verdicts.get(aid, []))
            ]
            for lvl, c in zip(ran, cs, strict=False):
                if lvl == verifier:
                    n, prompt, completion = (
                        n + 1,
                        prompt + (c["prompt_tokens"] or 0),
                        completion + (c["completion_tokens"] or 0),
                    )
        rows.append(
            JudgeRow(
                verifier=verifier,
                judged=judged,
                faults_judged=faults,
                caught=caught,
                catch_rate=_rate(caught, faults),
                false_rejections=false,
                calls=n,
                prompt_tokens=prompt,
                completion_tokens=completion,
                **claims,
            )
        )
    return rows


def _claim(cause: str) -> str:
    """What a judge's verdict says of its claim: founded, refuted, unverified ('' : no claim)."""
    if cause.startswith("founded:"):
        return "founded"
    if cause == "unfounded:unverified":
        return "unverified"
    return "refuted" if cause.startswith("unfounded:") else ""


# --- rendering -----------------------------------------------------------------------------------


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def _name(verifier: str, check: str, source: str) -> str:
    return f"{verifier}.{check}" if source == "gate" else f"{verifier}.judge"


def tables(r: ProbeReport) -> list[tuple[str, list[str], list[list[str]]]]:
    """The probe's tables as (title, headers, rows) of text, narrow enough for 80 columns:
    drawn by rich, and as Markdown."""
    judged = f"judge {r.judge}" if r.judge else "gates only"
    kinds = {"gold": "gold", "control": "ctrl", "fault": "fault"}
    by_class = [
        [
            c.fault_class,
            kinds[c.role],
            str(c.artifacts),
            str(sum(c.skipped.values())),
            str(c.caught_by_gate),
            str(c.caught_only_by_judge),
            str(c.escaped),
            _pct(c.escape_rate),
        ]
        for c in r.classes
    ]
    roles = {c.fault_class: c.role for c in r.classes}
    escapes = [
        [c.fault_class, f"{c.escaped}/{c.artifacts - c.crashed}", c.example_escape or "-"]
        for c in r.classes
        if c.role == "fault" and c.escaped
    ]
    caught = [
        [c.fault_class, _name(c.verifier, c.check, c.source), _pct(c.catch_rate), _pct(c.first_share)]
        for c in r.by_check_and_class
        if c.rejected and roles.get(c.fault_class, "fault") == "fault"
    ]
    checks = [
        [
            _name(c.verifier, c.check, c.source),
            str(c.checked),
            str(c.rejected),
            str(c.false_rejections),
            "-" if c.mean_us is None else f"{c.mean_us:.1f}",
        ]
        for c in r.checks
    ]
    false = [
        [_name(f.verifier, f.check, f.source), f.fault_class, f.task_id, f.cause, "; ".join(f.audit) or "-"]
        for f in r.false_rejections
    ]
    out = [
        (
            f"Probe {r.run}: {r.tasks} records, {', '.join(r.levels)}, {judged}: each class caught by a gate,"
            " by a judge only, or passed every check",
            ["class", "kind", "n", "skip", "gate", "judge", "passed", "share"],
            by_class,
        ),
        (
            "Faults that passed every check, with an example",
            ["class", "escaped", "example (task: answer)"],
            escapes,
        ),
        (
            "Each check on each fault class: caught alone, and stopped first in order",
            ["class", "check", "alone", "first"],
            caught,
        ),
        (
            "Checks: how often each ran and rejected, its false rejections of gold and controls, its time",
            ["check", "checked", "rejected", "false rej.", "mean us"],
            checks,
        ),
        (
            "False rejections of gold and controls, with what the dataset audit lists on the task (a"
            " stated example the task's own gold contradicts: the dataset's error, not the check's)",
            ["check", "class", "task", "cause", "the audit lists"],
            false or [["none", "", "", "", ""]],
        ),
    ]
    if r.judge:
        judges = [
            [
                f"{j.verifier}.judge",
                str(j.judged),
                str(j.faults_judged),
                str(j.caught),
                _pct(j.catch_rate),
                str(j.false_rejections),
                str(j.calls),
                str(j.prompt_tokens + j.completion_tokens),
            ]
            for j in r.judges
        ]
        out.append(
            (
                "Judges, on what every gate cleared",
                ["judge", "judged", "faults", "caught", "catch", "false rej.", "calls", "tokens"],
                judges,
            )
        )
        shown = [
            j
            for j in r.judges
            if j.founded_faults
            + j.founded_gold
            + j.refuted_faults
            + j.refuted_gold
            + j.unverified_faults
            + j.unverified_gold
        ]
        if shown:
            out.append(
                (
                    "Judges' claims, as the free check found them: founded (acted on), refuted and "
                    "unverified (recorded, not acted on), on faults and on gold and controls",
                    [
                        "judge",
                        "founded faults",
                        "founded gold",
                        "refuted faults",
                        "refuted gold",
                        "unverified faults",
                        "unverified gold",
                    ],
                    [
                        [
                            f"{j.verifier}.judge",
                            str(j.founded_faults),
                            str(j.founded_gold),
                            str(j.refuted_faults),
                            str(j.refuted_gold),
                            str(j.unverified_faults),
                            str(j.unverified_gold),
                        ]
                        for j in shown
                    ],
                )
            )
    return out


def matrix(r: ProbeReport) -> tuple[list[str], list[list[str]]]:
    """Catch rate alone, class by check: the table for the docs (Markdown)."""
    keys = [(c.verifier, c.check) for c in r.checks]
    cell = {(c.fault_class, c.verifier, c.check): c.catch_rate for c in r.by_check_and_class}
    headers = ["class", "n", *(_name(c.verifier, c.check, c.source) for c in r.checks)]
    rows = [
        [c.fault_class, str(c.artifacts), *(_pct(cell.get((c.fault_class, v, k))) for v, k in keys)]
        for c in r.classes
    ]
    return headers, rows
