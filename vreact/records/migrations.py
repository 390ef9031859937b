"""The records' schema as an append-only list of migrations: never edit or reorder one, only
add new ones at the end (an old run folder is brought up to date when a Store opens it)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from typing import Any

import sqlite_utils

from vreact.metrics import best_em, best_f1, support_f1
from vreact.v import legacy_verifier


def _m001_initial(db: sqlite_utils.Database) -> None:
    db.table("runs").create(
        {
            "id": int,
            "started": float,
            "finished": float,
            "config_json": str,
            "model": str,
            "dataset": str,
            "status": str,
        },
        pk="id",
    )
    db.table("tasks").create(
        {
            "id": str,
            "question": str,
            "answer": str,
            "aliases": str,
            "answerable": int,
            "hops": int,
            "support": str,
        },
        pk="id",
    )
    db.table("attempts").create(
        {
            "id": int,
            "run_id": int,
            "config": str,
            "task_id": str,
            "attempt_index": int,
            "seed": int,
            "outcome": str,
            "answer": str,
            "evidence": str,
            "abstain_level": str,
            "abstain_component": str,
            "abstain_cause": str,
            "error": str,
            "started": float,
            "finished": float,
        },
        pk="id",
        foreign_keys=[("run_id", "runs"), ("task_id", "tasks")],
    )
    db.table("model_calls").create(
        {
            "id": int,
            "attempt_id": int,
            "role": str,
            "model": str,
            "prompt_tokens": int,
            "completion_tokens": int,
            "latency_ms": float,
            "status": str,
            "error": str,
        },
        pk="id",
        foreign_keys=[("attempt_id", "attempts")],
    )
    db.table("verdicts").create(
        {
            "id": int,
            "attempt_id": int,
            "seq": int,
            "level": str,
            "component": str,
            "source": str,
            "verifier": str,
            "args": str,
            "decision": str,
            "cause": str,
            "detail": str,
            "budget_left": int,
            "artifact_hash": str,
        },
        pk="id",
        foreign_keys=[("attempt_id", "attempts")],
    )
    db.table("ledger").create(
        {
            "id": int,
            "verdict_id": int,
            "attempt_id": int,
            "level": str,
            "component": str,
            "artifact_hash": str,
            "artifact": str,
        },
        pk="id",
        foreign_keys=[("verdict_id", "verdicts"), ("attempt_id", "attempts")],
    )
    db.table("failures").create(
        {
            "id": int,
            "verdict_id": int,
            "attempt_id": int,
            "level": str,
            "component": str,
            "source": str,
            "verifier": str,
            "cause": str,
            "detail": str,
        },
        pk="id",
        foreign_keys=[("verdict_id", "verdicts"), ("attempt_id", "attempts")],
    )
    db.table("failures").create_index(["attempt_id", "component", "cause"])
    db.table("verdicts").create_index(["attempt_id"])
    db.table("model_calls").create_index(["attempt_id"])
    db.table("attempts").create_index(["run_id", "config", "task_id", "attempt_index"])


def _m002_plan_fallback(db: sqlite_utils.Database) -> None:
    db.table("attempts").add_column("plan_fallback", int)


def _m003_task_pairs(db: sqlite_utils.Database) -> None:
    db.table("tasks").add_column("pair_id", str)


def _m004_call_accounting(db: sqlite_utils.Database) -> None:
    calls = db.table("model_calls")
    calls.add_column("retries", int)
    calls.add_column("cached", int)
    calls.add_column("cost_usd", float)


def _m005_attempt_key(db: sqlite_utils.Database) -> None:
    # resuming a run must never record the same attempt twice
    db.table("attempts").create_index(
        ["run_id", "config", "task_id", "attempt_index"], index_name="attempts_key", unique=True
    )


def _m006_call_endpoint(db: sqlite_utils.Database) -> None:
    # the server (base URL) or local file that answered each call; older rows stay NULL
    db.table("model_calls").add_column("endpoint", str)


def _m007_crash_kind(db: sqlite_utils.Database) -> None:
    # what ended a crashed attempt (model, timeout, context_length, script, internal), and an
    # internal error's whole traceback; crashes recorded before stay NULL (unknown)
    attempts = db.table("attempts")
    attempts.add_column("crash_kind", str)
    attempts.add_column("traceback", str)


def _m008_transcripts(db: sqlite_utils.Database) -> None:
    # transcripts, for people and tools (never for a role's context): every call's messages
    # (each distinct message stored once, by hash) and reply, every verified artifact's JSON,
    # and each executor step with its observation
    calls = db.table("model_calls")
    calls.add_column("messages", str)  # JSON list of messages.hash, in order
    calls.add_column("response", str)
    db.table("messages").create({"hash": str, "role": str, "content": str}, pk="hash")
    db.table("artifacts").create({"hash": str, "json": str}, pk="hash")
    db.table("steps").create(
        {
            "id": int,
            "attempt_id": int,
            "component": str,
            "try": int,
            "step": int,
            "call_id": int,
            "thought": str,
            "action": str,
            "input": str,
            "evidence": str,
            "observation": str,
        },
        pk="id",
        foreign_keys=[("attempt_id", "attempts"), ("call_id", "model_calls")],
    )
    db.table("steps").create_index(["attempt_id"])
    db.execute(
        """create view transcript as
        select c.id as call_id, c.attempt_id, c.role as caller, j.key as position,
               m.role, m.content
        from model_calls c, json_each(c.messages) j join messages m on m.hash = j.value
        order by c.id, j.key"""
    )


def _m009_check_name(db: sqlite_utils.Database) -> None:
    # a verdict names its verifier (plan, R1, R2, R3, guard) and, apart, the check that decided
    # (``check_name``: the gate, judge or guard). Until now ``verifier`` held the check's name:
    # move it, and backfill ``verifier`` with the rule the viewer used to guess it by
    for table in ("verdicts", "failures"):
        db.table(table).add_column("check_name", str)
        db.execute(f"update {table} set check_name = verifier")
    verifier_of_gate: dict[int, dict[str, str]] = {}  # by run: "VERIFIER:gate" -> verifier
    for run in db.query("select id, config_json from runs"):
        try:
            sets = json.loads(run["config_json"] or "{}").get("verifiers") or {}
        except (ValueError, AttributeError):
            sets = {}
        verifier_of_gate[run["id"]] = {
            f"{v}:{g.get('name') if isinstance(g, dict) else g}": v
            for v in ("plan", "R1", "R2", "R3")
            for g in (sets.get(v) or {}).get("gates") or []
        }
    rows = db.query(
        "select v.id, v.level, v.source, v.check_name, a.run_id from verdicts v"
        " join attempts a on a.id = v.attempt_id"
    )
    updates = [
        (
            legacy_verifier(
                r["level"], r["source"], r["check_name"] or "", verifier_of_gate.get(r["run_id"], {})
            ),
            r["id"],
        )
        for r in rows
    ]
    db.conn.executemany("update verdicts set verifier = ? where id = ?", updates)
    db.execute(
        "update failures set verifier = (select v.verifier from verdicts v where v.id = failures.verdict_id)"
    )


def _m010_events(db: sqlite_utils.Database) -> None:
    # what a pipeline member said without deciding: hints and rollbacks (never memory, never a
    # rejection); one row each, at the step of the try where it happened
    db.table("events").create(
        {
            "id": int,
            "attempt_id": int,
            "component": str,
            "try": int,
            "step": int,
            "guard": str,
            "kind": str,
            "detail": str,
        },
        pk="id",
        foreign_keys=[("attempt_id", "attempts")],
    )
    db.table("events").create_index(["attempt_id"])
    # the step cap and the attempt's step budget are budgets, not guards: their stops recorded
    # before as guard verdicts become budget verdicts (source and verifier "budget")
    for table in ("verdicts", "failures"):
        db.execute(
            f"update {table} set source = 'budget', verifier = 'budget'"
            " where source = 'guard' and check_name in ('step_cap', 'step_budget')"
        )


def _m011_diagnoses(db: sqlite_utils.Database) -> None:
    # vreact diagnose: an independent judge's ratings of a sampled trajectory (seed 000, Table 5)
    db.table("diagnoses").create(
        {
            "id": int,
            "attempt_id": int,
            "judge": str,
            "state": str,
            "validation": str,
            "evidence_complete": int,
            "constraints_satisfied": int,
            "admitted_guessing": int,
            "reason": str,
            "created": float,
        },
        pk="id",
        foreign_keys=[("attempt_id", "attempts")],
    )
    db.table("diagnoses").create_index(["attempt_id"])


def _m012_cached_tokens(db: sqlite_utils.Database) -> None:
    # the prompt tokens the server said it reused from its prompt cache (OpenAI's
    # prompt_tokens_details.cached_tokens, Anthropic's cache_read_input_tokens, an in-process
    # llama.cpp's kept KV prefix); NULL where it does not say, and for older rows
    db.table("model_calls").add_column("cached_tokens", int)


def _m013_ledger_units(db: sqlite_utils.Database) -> None:
    # the ledger carries accepted work: one row per accepted component (a plan, a subtask's
    # unit, the final answer) with the whole gate input; older rows (one per gate accept) keep
    # kind NULL
    ledger = db.table("ledger")
    ledger.add_column("kind", str)
    ledger.add_column("slot", str)
    ledger.add_column("input", str)


def _m014_attempt_calls(db: sqlite_utils.Database) -> None:
    # how many model calls the store was given for each attempt, written when it ends: what
    # vreact check holds its model_calls rows to (a call lost on the way shows); NULL for
    # attempts recorded before
    db.table("attempts").add_column("calls", int)


def _m015_call_cut(db: sqlite_utils.Database) -> None:
    # 1 when the model's reply was longer than vreact reads (MAX_REPLY_CHARS) and was cut: the
    # response kept is what the parsers were given; 0 (NULL before) otherwise
    db.table("model_calls").add_column("cut", int)


def _m016_step_cut(db: sqlite_utils.Database) -> None:
    # 1 when the step's observation shows a paragraph longer than vreact keeps
    # (MAX_PARAGRAPH_CHARS), cut when the dataset or corpus was read; 0 (NULL before) otherwise
    db.table("steps").add_column("cut", int)


def _m017_check_time(db: sqlite_utils.Database) -> None:
    # how long a gate or judge took to decide, in seconds (NULL: not timed, as a guard's or a
    # budget's stop, and in records made before)
    db.table("verdicts").add_column("seconds", float)


def _m018_probe_skips(db: sqlite_utils.Database) -> None:
    # a probe's fault classes that a record could not yield (no bridge entity, no number in the
    # answer, ...): how many records, by class and reason
    db.table("probe_skips").create(
        {"id": int, "run_id": int, "class": str, "reason": str, "count": int},
        pk="id",
        foreign_keys=[("run_id", "runs")],
    )


def _m019_gate_inputs(db: sqlite_utils.Database) -> None:
    # each verdict's gate input (the answer, its evidence, the cited text, the retrieved ids, the
    # searches; a plan; a chain), kept once per hash, so vreact replay checks a run's artifacts
    # again; NULL in records made before
    db.table("inputs").create({"hash": str, "json": str}, pk="hash")
    db.table("verdicts").add_column("input_hash", str)


def _m020_step_source(db: sqlite_utils.Database) -> None:
    # who issued a step: the executor (its model) or the L3 designer (a search it ran for the
    # try, issue 24); NULL in records made before (the executor's). And a finish's hops
    # (finish: hops): [{entity, paragraph}, ...] as JSON, NULL when it names none
    db.table("steps").add_column("source", str)
    db.table("steps").add_column("hops", str)


def _m021_task_attacks(db: sqlite_utils.Database) -> None:
    # an attacked copy of a task (dataset.attacks, issue 25): its attack's name and kind, the
    # clean task it copies, the attacker's goal and target, and which paragraph ids were added
    # (JSON); NULL on clean tasks and in records made before. For the report, never a role
    for column in ("attack", "base_id", "attack_kind", "goal", "target", "added"):
        db.table("tasks").add_column(column, str)


def _m022_call_charges(db: sqlite_utils.Database) -> None:
    # who a call is charged to (issue 33): a judge's call names its verifier (plan, R1, R2, R3),
    # so the report gives cost by level; a call made in the try (or re-plan, or re-descent) that
    # a rejection caused names that check, VERIFIER:SOURCE:CHECK. NULL in records made before,
    # and where nothing caused it
    db.table("model_calls").add_column("verifier", str)
    db.table("model_calls").add_column("caused_by", str)


def _m023_task_families(db: sqlite_utils.Database) -> None:
    # task families (issue 34): the family (and its version) that made a run and that each task
    # belongs to, NULL in records made before (question answering, the only family then); a
    # task's own record as its family gives it (JSON, gold fields included: for scoring and the
    # report, never a role); and each attempt's score, written by its family's scorer when the
    # attempt ends, so reading a run never needs the machinery that made it. The QA columns of
    # ``tasks`` stay, and a run without scores is scored from them as before
    db.table("runs").add_column("family", str)
    db.table("runs").add_column("family_version", str)
    db.table("tasks").add_column("family", str)
    db.table("tasks").add_column("record", str)
    db.table("scores").create(
        {"attempt_id": int, "correct": int, "metrics": str},
        pk="attempt_id",
        foreign_keys=[("attempt_id", "attempts")],
    )


def _m024_try_scores(db: sqlite_utils.Database) -> None:
    # Issue 35: each judged try the family could score (code: the hidden test on every program a
    # verifier judged), by artifact hash, as JSON {hash: right}: what tells a gate's rejection of
    # a right try, and a correction the scorer confirms, from the rest. Empty for other families
    db.table("scores").add_column("tries", str)


def _m025_step_seconds(db: sqlite_utils.Database) -> None:
    # Issue 38: how long a step's tool ran, in seconds (a registered tool's call: search, read, a
    # user's own); NULL for a final, a blocked step, a designer's bridge, and in records made before
    db.table("steps").add_column("seconds", float)


def _m026_provenance(db: sqlite_utils.Database) -> None:
    # Issue 52: what made a run's attempts, beside its identity and never in it: vreact's version,
    # the commit of the checkout it was imported from and whether a tracked file differed,
    # Python's and the result-shaping libraries' versions, each model's file hash or served id,
    # and the dataset files' hashes (JSON, vreact.records.provenance). A row each time a
    # process opens the run (a new run, or a resume); each attempt names the row it was made
    # under. NULL in records made before: their provenance is "not recorded"
    db.table("provenance").create(
        {"id": int, "run_id": int, "recorded": float, "data": str},
        pk="id",
        foreign_keys=[("run_id", "runs")],
    )
    db.table("attempts").add_column("provenance_id", int)


def _m027_scorers(db: sqlite_utils.Database) -> None:
    # Issue 53: an attempt is scored by each scorer its run records (code: HumanEval's hidden
    # test, ``humaneval``, and HumanEval+'s inputs, ``humanevalplus``), a row each, keyed by
    # scorer; ``is_primary`` marks the run's own (what decides correct). Rows made before are
    # their run's primary: a code run's scorer was the hidden test; a family with one scorer
    # names none ('')
    db.table("scores").add_column("scorer", str, not_null_default="")
    db.table("scores").add_column("is_primary", int, not_null_default=1)
    db.execute(
        "update scores set scorer = 'humaneval' where attempt_id in (select a.id from attempts a"
        " join runs r on r.id = a.run_id where r.family = 'code')"
    )
    db.table("scores").transform(pk=("attempt_id", "scorer"))


def _m028_scores_before_families(db: sqlite_utils.Database) -> None:
    # Issue 55: the report reads one source, the scores. Runs made before families (family NULL,
    # question answering, the only family then) get their family and, for each ended attempt,
    # its score as the report computed it for them until now (``score_before_families``:
    # MuSiQue's rule on the tasks' columns, keyed as the qa family's own scorer writes it); so
    # does any ended attempt of a question-answering task that was recorded without a score (a
    # probe's). Their family_version stays NULL: not recorded
    score_before_families(db.conn)
    db.execute("update runs set family = 'qa' where family is null")
    db.execute("update tasks set family = 'qa' where family is null")


def _m029_call_stop_reason(db: sqlite_utils.Database) -> None:
    # why the provider says each reply stopped, in its own word (an OpenAI-compatible server's
    # finish_reason: stop, length, tool_calls; Anthropic's stop_reason: end_turn, max_tokens,
    # tool_use): length and max_tokens say a reply was cut at its token allowance, which a cut
    # program read as a wrong one hid. NULL in records made before, for a failed call, and where
    # the provider did not say (a reply the response cache kept before it kept the reason)
    db.table("model_calls").add_column("stop_reason", str)


def _m030_agreements(db: sqlite_utils.Database) -> None:
    # Agreement among candidates (an attempt that made k of them, agreement.k above 1): a row
    # per attempt, k, tau and what was selected (agree, first), the candidate chosen (NULL:
    # none) and why none, each candidate's fate (JSON: index -> answer, rejected, stated,
    # declined, stopped) and artifact hash (JSON: what scored tries are keyed by), the groups
    # (JSON: members, disputed) and the inputs compared on (JSON, a family's record). No row in
    # records made before, nor for an attempt of one candidate
    db.table("agreements").create(
        {
            "attempt_id": int,
            "k": int,
            "tau": float,
            "selected": str,
            "chosen": int,
            "cause": str,
            "candidates": str,
            "hashes": str,
            "groups": str,
            "record": str,
        },
        pk="attempt_id",
        foreign_keys=[("attempt_id", "attempts")],
    )


def _json_list(text: str | None) -> list[Any]:
    """A JSON list column, as the reader parses it (anything else: empty)."""
    try:
        value = json.loads(text or "[]")
    except ValueError:
        return []
    return value if isinstance(value, list) else []


def score_before_families(conn: sqlite3.Connection, attempt_id: int | None = None) -> None:
    """Score each ended attempt (``attempt_id``'s alone, when given) that has no score and whose
    task is question answering's (its family NULL or ``qa``) as the report scored such attempts
    before it read scores only: by MuSiQue's rule on the task's columns (answer and aliases,
    answerable, support), with the metrics the qa family's scorer writes for MuSiQue's records
    (``em``, ``f1``, ``support_f1``; an abstention's all 0) and its row (the family's only
    scorer: ``''``, primary, no tries). Records made before families are scored so by
    ``_m028_scores_before_families``; an attempt a writer ends without any score (one that
    scores nothing, as vreact did before families) by ``Store.finish_attempt``."""
    one = " and a.id = ?" if attempt_id is not None else ""
    rows = conn.execute(
        "select a.id, a.outcome, a.answer, a.evidence, t.answer as gold, t.aliases, t.answerable,"
        " t.support from attempts a join tasks t on t.id = a.task_id"
        " where a.outcome in ('answer', 'abstain') and coalesce(t.family, 'qa') = 'qa'"
        f" and not exists (select 1 from scores s where s.attempt_id = a.id){one}",
        [attempt_id] if attempt_id is not None else [],
    ).fetchall()
    scores = []
    for aid, outcome, answer, evidence, gold, aliases, answerable, support in rows:
        golds = [gold or "", *_json_list(aliases)]
        answerable = bool(answerable) if answerable is not None else True
        answered = outcome == "answer"
        em = best_em(answer or "", golds) if answered and answerable else 0.0
        metrics = {
            "em": em,
            "f1": best_f1(answer or "", golds) if answered and answerable else 0.0,
            "support_f1": support_f1(_json_list(evidence) if answered else [], _json_list(support)),
        }
        correct = int(answerable and em == 1.0) if answered else None
        scores.append((aid, "", 1, correct, json.dumps(metrics), json.dumps({})))
    conn.executemany(
        "insert into scores (attempt_id, scorer, is_primary, correct, metrics, tries)"
        " values (?, ?, ?, ?, ?, ?)",
        scores,
    )


#: Append-only: never edit or reorder an entry, only add new ones at the end.
MIGRATIONS: list[Callable[[sqlite_utils.Database], None]] = [
    _m001_initial,
    _m002_plan_fallback,
    _m003_task_pairs,
    _m004_call_accounting,
    _m005_attempt_key,
    _m006_call_endpoint,
    _m007_crash_kind,
    _m008_transcripts,
    _m009_check_name,
    _m010_events,
    _m011_diagnoses,
    _m012_cached_tokens,
    _m013_ledger_units,
    _m014_attempt_calls,
    _m015_call_cut,
    _m016_step_cut,
    _m017_check_time,
    _m018_probe_skips,
    _m019_gate_inputs,
    _m020_step_source,
    _m021_task_attacks,
    _m022_call_charges,
    _m023_task_families,
    _m024_try_scores,
    _m025_step_seconds,
    _m026_provenance,
    _m027_scorers,
    _m028_scores_before_families,
    _m029_call_stop_reason,
    _m030_agreements,
]
