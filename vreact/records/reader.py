"""One typed reader of a run's records: :func:`read_run` returns the run, its tasks and its
finished attempts, each with its verdicts (and the artifact each one judged), model calls (with
their messages and reply), executor steps and ledger rows; :func:`run_list`, the folder's runs.
The report and the HTML view read the records only through them."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any, TypeVar

from vreact.records.faults import RETRYABLE_CRASHES
from vreact.records.folder import DB_NAME
from vreact.records.store import Store, open_to_read


def _json(text: str | None, default: Any = None) -> Any:
    """A JSON column, parsed (``default`` for NULL or text that is not JSON)."""
    if text is None:
        return default
    try:
        return json.loads(text)
    except ValueError:
        return default


def _list(text: str | None) -> list[Any]:
    value = _json(text or "[]", [])
    return value if isinstance(value, list) else []


_R = TypeVar("_R")


_COLUMNS: dict[type, tuple[tuple[str, str, bool], ...]] = {}


def _columns(cls: type) -> tuple[tuple[str, str, bool], ...]:
    """Each field of a record dataclass: its name, its column (``try_`` is ``try``), and
    whether it has a default."""
    if cls not in _COLUMNS:
        _COLUMNS[cls] = tuple(
            (f.name, f.name.rstrip("_"), f.default is not MISSING or f.default_factory is not MISSING)
            for f in fields(cls)
        )
    return _COLUMNS[cls]


def _record(cls: type[_R], row: dict[str, Any], **given: Any) -> _R:
    """A record from its row: each field the column of its name (None when an older folder
    lacks it), unless ``given``; a field that is no column keeps its default."""
    values = dict(given)
    for name, column, has_default in _columns(cls):
        if name not in values and (column in row or not has_default):
            values[name] = row.get(column)
    return cls(**values)


@dataclass(frozen=True)
class RunRow:
    """A row of ``runs``: ``config`` is the resolved configuration it was made with."""

    id: int
    config: dict[str, Any]
    model: str | None
    dataset: str | None
    status: str | None
    started: float | None
    finished: float | None
    #: the task family that made it (None only for a run its writer named none of: the default
    #: family's, ``vreact.families.DEFAULT``; runs made before families are question answering's)
    family: str | None = None
    family_version: str | None = None  # None: not recorded (runs made before families)


@dataclass(frozen=True)
class ScoreRecord:
    """An attempt's score, as its family's scorer gave it when the attempt ended."""

    correct: bool | None
    metrics: dict[str, float]
    #: each judged try its family scored, by artifact hash: right by gold (empty: none scored)
    tries: dict[str, bool] = field(default_factory=dict)
    #: the scorer that gave it ('': the family's own, its only one; code: ``humaneval`` or
    #: ``humanevalplus``)
    scorer: str = ""


@dataclass(frozen=True)
class TaskRecord:
    """A row of ``tasks``, its JSON columns parsed."""

    id: str
    question: str | None
    answer: str | None
    aliases: list[str]
    answerable: bool
    hops: int | None
    support: list[str]
    pair_id: str | None
    # an attacked copy (dataset.attacks): its attack, the clean task's id, the attack's kind, the
    # attacker's goal (answer, url, reverse) and target, the added paragraphs' ids; else None
    attack: str | None = None
    base_id: str | None = None
    attack_kind: str | None = None
    goal: str | None = None
    target: str | None = None
    added: list[str] = field(default_factory=list)
    family: str | None = None  # its task family (None: its writer named none)
    record: Any = None  # the task as its family records it beyond these columns (JSON parsed)

    @property
    def golds(self) -> list[str]:
        """The gold answer and its aliases."""
        return [self.answer or "", *self.aliases]


@dataclass(frozen=True)
class VerdictRecord:
    """A row of ``verdicts``, ``args`` parsed, and the JSON of the artifact it judged (from
    ``artifacts``; None when the records have none)."""

    id: int
    attempt_id: int
    seq: int
    level: str
    component: str | None
    source: str
    verifier: str | None
    check_name: str | None
    args: Any
    decision: str
    cause: str | None
    detail: str | None
    budget_left: int | None
    artifact_hash: str | None
    artifact: Any = None
    seconds: float | None = None  # how long the check took (None: not timed)
    input_hash: str | None = None  # its gate input's row in ``inputs`` (None: not kept)

    @property
    def rejected(self) -> bool:
        return self.decision == "reject"


@dataclass(frozen=True)
class CallRecord:
    """A row of ``model_calls``; ``messages`` is the prompt as {role, content} dicts in order
    (resolved through ``messages``; None for calls recorded before transcripts were kept)."""

    id: int
    attempt_id: int
    role: str
    model: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    cached_tokens: int | None  # prompt tokens the server said it reused (None: not said)
    latency_ms: float | None
    status: str | None
    error: str | None
    retries: int | None
    cached: bool
    cost_usd: float | None
    endpoint: str | None
    response: str | None
    messages: list[dict[str, str]] | None = None
    verifier: str | None = None  # a judge's call: the verifier it judged for (plan, R1, R2, R3)
    caused_by: str | None = None  # the check (VERIFIER:SOURCE:CHECK) whose rejection caused its try
    #: why the provider says the reply stopped (length, max_tokens: at its token allowance; None:
    #: it did not say, a failed call, records made before)
    stop_reason: str | None = None


@dataclass(frozen=True)
class StepRecord:
    """A row of ``steps``: one executor step of a try (``try_`` is the ``try`` column)."""

    id: int
    attempt_id: int
    component: str | None
    try_: int
    step: int
    call_id: int | None
    thought: str | None
    action: str | None
    input: str | None
    evidence: list[str]
    observation: str | None
    source: str = "executor"  # or "designer": a search the L3 designer ran for the try
    hops: list[dict[str, str]] = field(default_factory=list)  # a finish's hops (finish: hops)


@dataclass(frozen=True)
class DiagnosisRecord:
    """A row of ``diagnoses``: an independent judge's ratings of one attempt's trajectory."""

    id: int
    attempt_id: int
    judge: str
    state: str  # GOOD | MIXED | POOR | N/A
    validation: str  # GOOD | MIXED | POOR | N/A
    evidence_complete: bool
    constraints_satisfied: bool
    admitted_guessing: bool
    reason: str | None


@dataclass(frozen=True)
class EventRecord:
    """A row of ``events``: a pipeline member's hint or rollback at one step of a try."""

    id: int
    attempt_id: int
    component: str | None
    try_: int
    step: int
    guard: str
    kind: str
    detail: str | None


@dataclass(frozen=True)
class AgreementRecord:
    """A row of ``agreements``: what an attempt made of its k candidates. ``candidates``: each
    candidate's fate by index (answer, rejected, stated, declined, stopped); ``groups``: each with its
    ``members`` and ``disputed``, largest first; ``chosen`` None with ``cause`` when none was
    answered; ``record``: what the family kept (code: the inputs compared on and their sources)."""

    attempt_id: int
    k: int
    tau: float
    selected: str
    chosen: int | None
    cause: str | None
    candidates: dict[str, str]
    groups: list[dict[str, Any]]
    record: dict[str, Any]
    #: each candidate's artifact hash, by index (its family's scored tries are keyed by it)
    hashes: dict[str, str] = field(default_factory=dict)

    @property
    def top(self) -> dict[str, Any] | None:
        return self.groups[0] if self.groups else None


@dataclass(frozen=True)
class LedgerRecord:
    """A row of ``ledger`` (the success ledger): an accepted unit, its artifact and gate input
    parsed (rows from before migration 013, one per accept verdict, have no kind, slot or input)."""

    id: int
    verdict_id: int | None
    attempt_id: int
    level: str
    component: str | None
    artifact_hash: str | None
    artifact: Any
    kind: str | None = None  # plan | unit | answer
    slot: str | None = None
    input: Any = None


@dataclass(frozen=True)
class AttemptRecord:
    """A finished attempt with everything it wrote, each list in the order it was written."""

    id: int
    run_id: int
    config: str
    task_id: str
    attempt_index: int
    seed: int | None
    outcome: str
    answer: str | None
    evidence: list[str]
    abstain_level: str | None
    abstain_component: str | None
    abstain_cause: str | None
    error: str | None
    crash_kind: str | None
    traceback: str | None
    plan_fallback: bool
    started: float | None
    finished: float | None
    #: the provenance row (``RunRecords.provenance``) of the state that made it (None: not recorded)
    provenance_id: int | None = None
    verdicts: list[VerdictRecord] = field(default_factory=list)
    calls: list[CallRecord] = field(default_factory=list)
    steps: list[StepRecord] = field(default_factory=list)
    ledger: list[LedgerRecord] = field(default_factory=list)
    events: list[EventRecord] = field(default_factory=list)
    diagnoses: list[DiagnosisRecord] = field(default_factory=list)
    #: what it made of k candidates (None: it made one at a time)
    agreement: AgreementRecord | None = None
    #: its family's score, written when it ended (None: a crash, or a task with nothing its scorer
    #: needs; records made before families are given theirs by their migration): its run's
    #: primary scorer's
    score: ScoreRecord | None = None
    #: its score by each scorer recorded, by scorer name, the primary's included (``vreact
    #: rescore`` adds another's)
    scores: dict[str, ScoreRecord] = field(default_factory=dict)


@dataclass(frozen=True)
class RunRecords:
    """One run's records: ``id`` is the run asked for (None: the folder has no run yet), ``run``
    its row (None if the folder has no such run)."""

    id: int | None
    run: RunRow | None
    tasks: dict[str, TaskRecord]
    attempts: list[AttemptRecord]
    #: what made its attempts (``vreact.records.provenance``), by provenance row id: each
    #: row's data with ``recorded``, the time it was recorded (empty: none was recorded)
    provenance: dict[int, dict[str, Any]] = field(default_factory=dict)

    def task(self, attempt: AttemptRecord) -> TaskRecord | None:
        return self.tasks.get(attempt.task_id)

    def to_pandas(self, table: str = "attempts") -> Any:
        """One table (attempts, verdicts, calls, steps or tasks) as a pandas DataFrame, the
        columns of ``vreact export`` (docs/results.md); needs ``vreact[analysis]``."""
        from vreact.records.export import to_pandas

        return to_pandas(self, table)


@dataclass(frozen=True)
class RunSummary:
    """One run of a folder as its run list shows it: its configurations (those its resolved
    configuration lists, then any only its attempts name), when it started, its status and how
    many attempts it finished."""

    id: int
    configs: list[str]
    started: float | None
    status: str | None
    attempts: int


def run_list(store_or_path: Store | str | Path) -> list[RunSummary]:
    """Every run of a store, a ``vreact.db`` file or a run folder, oldest first (a file or a
    folder is opened read-only: :func:`vreact.records.store.open_to_read`)."""
    store = _open(store_or_path)
    done: dict[int, dict[str, int]] = defaultdict(dict)
    for r in store.query(
        "select run_id, config, count(*) as n from attempts where outcome != 'running'"
        " group by run_id, config order by min(id)"
    ):
        done[r["run_id"]][r["config"]] = r["n"]
    out = []
    for row in store.query("select id, config_json, started, status from runs order by id"):
        resolved = _json(row["config_json"], {})
        listed = resolved.get("configs", []) if isinstance(resolved, dict) else []
        names = [str(c.get("name")) for c in listed if isinstance(c, dict)]
        counts = done.get(row["id"], {})
        names += [n for n in counts if n not in names]
        out.append(RunSummary(row["id"], names, row["started"], row["status"], sum(counts.values())))
    return out


@dataclass(frozen=True)
class CrashKinds:
    """The crashes of one kind in a run: how many, the first one's error, and whether a resume
    runs them again (``RETRYABLE_CRASHES``)."""

    kind: str
    attempts: int
    first_error: str
    rerun: bool

    def line(self) -> str:
        again = "run again on resume" if self.rerun else "final"
        return f"{self.attempts} {self.kind} ({again}); the first: {self.first_error}"


def crash_kinds(store_or_path: Store | str | Path, run_id: int) -> list[CrashKinds]:
    """The run's crashes by kind, most first."""
    store = _open(store_or_path)
    rows = store.query(
        "select coalesce(crash_kind, 'unknown') as kind, count(*) as n,"
        " (select error from attempts f where f.run_id = a.run_id and f.outcome = 'crash'"
        " and coalesce(f.crash_kind, 'unknown') = coalesce(a.crash_kind, 'unknown') order by f.id limit 1)"
        " as first from attempts a where run_id = ? and outcome = 'crash' group by kind"
        " order by n desc, kind",
        [run_id],
    )
    return [CrashKinds(r["kind"], r["n"], r["first"] or "", r["kind"] in RETRYABLE_CRASHES) for r in rows]


def latest_run_id(store: Store) -> int | None:
    """The id of the folder's latest run (None if it has none)."""
    row = next(store.query("select max(id) as id from runs"), None)
    return row["id"] if row else None


def _open(store_or_path: Store | str | Path) -> Store:
    if isinstance(store_or_path, Store):
        return store_or_path
    path = Path(store_or_path)
    return open_to_read(path / DB_NAME if path.is_dir() else path)


def config_order(records: RunRecords) -> list[str]:
    """The run's configurations in the order it named them (concurrent attempts finish in any
    order), then any others in the order of their first attempt."""
    resolved = records.run.config if records.run else {}
    declared = [c.get("name") for c in resolved.get("configs", [])]
    present = dict.fromkeys(a.config for a in records.attempts)
    return [n for n in declared if n in present] + [n for n in present if n not in declared]


def unscored(attempt: AttemptRecord, task: TaskRecord) -> bool:
    """Whether an ended attempt has no score because its task has nothing its run's scorer
    needs (code: a problem without a hidden test): its family wrote none. (Records made before
    families were scored by their migration, ``_m028_scores_before_families``.)"""
    return attempt.outcome in ("answer", "abstain") and attempt.score is None


def correct_answer(attempt: AttemptRecord, task: TaskRecord, answer: str | None = None) -> bool | None:
    """Whether ``answer`` (default: the attempt's own) is right, by its family's score when it
    is the answer the attempt ended with (written when it ended); None when the scores cannot
    say: no score, or an answer the attempt did not end with (a judged try's: its family's
    ``tries``, where it scored them, or ``TaskFamily.answer_right`` say)."""
    own = answer is None or (attempt.outcome == "answer" and answer == (attempt.answer or ""))
    if own and attempt.score is not None:
        return attempt.score.correct is True
    return None


def read_run(
    store_or_path: Store | str | Path,
    run_id: int | None = None,
    *,
    transcripts: bool = True,
    artifacts: bool | None = None,
) -> RunRecords:
    """The records of one run (the latest by default) of a store, a ``vreact.db`` file or a run
    folder (a file or a folder is opened read-only). Without ``transcripts`` the calls' messages
    and replies are left out (None), which is quicker for a large run; so are the verdicts'
    artifacts unless ``artifacts`` (default: as ``transcripts``) asks for them (each distinct
    artifact is read once)."""
    store = _open(store_or_path)
    run_id = run_id or latest_run_id(store)
    if run_id is None:
        return RunRecords(None, None, {}, [])
    row = next(store.query("select * from runs where id = ?", [run_id]), None)
    attempts = list(
        store.query("select * from attempts where run_id = ? and outcome != 'running' order by id", [run_id])
    )
    sub = "(select id from attempts where run_id = ? and outcome != 'running')"
    children = _children(store, sub, run_id, transcripts, transcripts if artifacts is None else artifacts)
    records = [_attempt(a, {k: v.get(a["id"], []) for k, v in children.items()}) for a in attempts]
    tasks = _tasks(store, {a["task_id"] for a in attempts})
    return RunRecords(run_id, _run(row), tasks, records, _provenance(store, run_id))


def _provenance(store: Store, run_id: int) -> dict[int, dict[str, Any]]:
    """The run's provenance rows by id, each its data with the time it was recorded."""
    rows = store.query("select id, recorded, data from provenance where run_id = ? order by id", [run_id])
    out = {}
    for r in rows:
        data = _json(r["data"], {})
        out[r["id"]] = {**(data if isinstance(data, dict) else {}), "recorded": r["recorded"]}
    return out


def _run(row: dict[str, Any] | None) -> RunRow | None:
    if row is None:
        return None
    config = _json(row["config_json"], {})
    return RunRow(
        row["id"],
        config if isinstance(config, dict) else {},
        row["model"],
        row["dataset"],
        row["status"],
        row["started"],
        row["finished"],
        row.get("family"),
        row.get("family_version"),
    )


def _grouped(rows: Iterable[Any]) -> dict[int, list[Any]]:
    out: dict[int, list[Any]] = defaultdict(list)
    for r in rows:
        out[r.attempt_id].append(r)
    return out


def _children(
    store: Store, sub: str, run_id: int, transcripts: bool, with_artifacts: bool
) -> dict[str, dict[int, list[Any]]]:
    """Verdicts, calls, steps and ledger rows of the run's finished attempts, by attempt id."""

    def rows(table: str, order: str) -> Iterable[dict[str, Any]]:
        return store.query(f"select * from {table} where attempt_id in {sub} order by {order}", [run_id])

    artifacts: dict[str, Any] = {}  # by hash: each distinct one parsed once
    messages: dict[int, list[dict[str, str]]] = defaultdict(list)
    if with_artifacts:
        for r in store.query(
            "select hash, json from artifacts where hash in"
            f" (select artifact_hash from verdicts where attempt_id in {sub})",
            [run_id],
        ):
            artifacts[r["hash"]] = _json(r["json"])
    if transcripts:
        for r in store.query(
            f"select call_id, role, content from transcript where attempt_id in {sub}"
            " order by call_id, position",
            [run_id],
        ):
            messages[r["call_id"]].append({"role": r["role"], "content": r["content"]})
    return {
        "verdicts": _grouped(
            _verdict(v, artifacts.get(v["artifact_hash"])) for v in rows("verdicts", "seq, id")
        ),
        "calls": _grouped(_call(c, messages, transcripts) for c in rows("model_calls", "id")),
        "steps": _grouped(_step(s) for s in rows("steps", "id")),
        "ledger": _grouped(_ledger(r) for r in rows("ledger", "id")),
        "events": _grouped(_event(r) for r in rows("events", "id")),
        "diagnoses": _grouped(_diagnosis(r) for r in rows("diagnoses", "id")),
        "scores": _grouped(
            _score(r) for r in (rows("scores", "attempt_id") if _has(store, "scores") else ())
        ),
        "agreements": _grouped(
            _agreement(r) for r in (rows("agreements", "attempt_id") if _has(store, "agreements") else ())
        ),
    }


def _has(store: Store, table: str) -> bool:
    """Whether the records have ``table`` (a folder an older vreact made, read as it is, may not)."""
    found = store.db.execute("select 1 from sqlite_master where type = 'table' and name = ?", [table])
    return found.fetchone() is not None


@dataclass(frozen=True)
class _Score:
    attempt_id: int
    score: ScoreRecord
    primary: bool


def _score(r: dict[str, Any]) -> _Score:
    correct = None if r["correct"] is None else bool(r["correct"])
    metrics = _json(r["metrics"], {})
    tries = _json(r.get("tries"), {})
    tries = {str(h): bool(v) for h, v in tries.items()} if isinstance(tries, dict) else {}
    scorer = str(r.get("scorer") or "")
    record = ScoreRecord(correct, metrics if isinstance(metrics, dict) else {}, tries, scorer)
    return _Score(r["attempt_id"], record, bool(r.get("is_primary", 1)))


def _tasks(store: Store, ids: set[str]) -> dict[str, TaskRecord]:
    out: dict[str, TaskRecord] = {}
    ordered = sorted(ids)
    for i in range(0, len(ordered), 500):  # SQLite caps the number of parameters
        chunk = ordered[i : i + 500]
        marks = ",".join("?" * len(chunk))
        for t in store.query(f"select * from tasks where id in ({marks})", chunk):
            lists = {"aliases": _list(t["aliases"]), "support": _list(t["support"])}
            lists["added"] = _list(t.get("added"))
            # a task of another family has no answerability column: it has an answer to find
            answerable = bool(t["answerable"]) if t["answerable"] is not None else True
            record = _json(t["record"]) if t.get("record") else None
            out[t["id"]] = _record(TaskRecord, t, answerable=answerable, record=record, **lists)
    return out


def _verdict(v: dict[str, Any], artifact: Any) -> VerdictRecord:
    return _record(VerdictRecord, v, args=_json(v["args"]), artifact=artifact)


def _call(c: dict[str, Any], messages: dict[int, list[dict[str, str]]], transcripts: bool) -> CallRecord:
    return _record(
        CallRecord,
        c,
        cached=bool(c.get("cached")),
        response=c.get("response") if transcripts else None,
        messages=messages.get(c["id"], []) if transcripts and c.get("messages") is not None else None,
    )


def _step(s: dict[str, Any]) -> StepRecord:
    hops = _json(s.get("hops"), None) or []
    return _record(
        StepRecord, s, evidence=_list(s["evidence"]), source=s.get("source") or "executor", hops=hops
    )


def _diagnosis(r: dict[str, Any]) -> DiagnosisRecord:
    flags = ("evidence_complete", "constraints_satisfied", "admitted_guessing")
    return _record(DiagnosisRecord, r, **{f: bool(r[f]) for f in flags})


def _agreement(r: dict[str, Any]) -> AgreementRecord:
    return _record(
        AgreementRecord,
        r,
        candidates=_json(r["candidates"], {}) or {},
        hashes=_json(r.get("hashes"), {}) or {},
        groups=_json(r["groups"], []) or [],
        record=_json(r["record"], {}) or {},
    )


def _event(r: dict[str, Any]) -> EventRecord:
    return _record(EventRecord, r)


def _ledger(r: dict[str, Any]) -> LedgerRecord:
    return _record(
        LedgerRecord, r, artifact=_json(r["artifact"], r["artifact"]), input=_json(r.get("input"), None)
    )


def _attempt(a: dict[str, Any], children: dict[str, list[Any]]) -> AttemptRecord:
    """An attempt with its verdicts, calls, steps, ledger rows, events and diagnoses."""
    evidence, fallback = _list(a["evidence"]), bool(a.get("plan_fallback"))
    scores = sorted(children.pop("scores", []), key=lambda s: not s.primary)  # the primary first
    score = scores[0].score if scores and scores[0].primary else None  # None: not by the primary
    by_scorer = {s.score.scorer: s.score for s in scores}
    agreement = (children.pop("agreements", None) or [None])[0]
    return _record(
        AttemptRecord,
        a,
        evidence=evidence,
        plan_fallback=fallback,
        score=score,
        scores=by_scorer,
        agreement=agreement,
        **children,
    )
