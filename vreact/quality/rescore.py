"""``vreact rescore``: a recorded run's programs scored by another scorer, with no model call.

The run's records are copied (SQLite's backup, from a source opened by nothing else: the source
is never written, not even migrated), and the copy gains one score row per ended attempt under
the new scorer (``is_primary`` 0: the run's own scorer still decides what is correct), with its
judged tries scored too, exactly as a run scores them when an attempt ends
(``vreact.families.score_outcome``). ``vreact report`` on the copy then shows both
scorers side by side. Everything is checked before anything is made: a run of another family, a
scorer the family does not have or that the run already holds, tasks the scorer has no data for
(code: a problem that is not HumanEval+'s), a ``--out`` that is not empty, no sandbox, a shipped
file whose sha256 does not match; each is one line and nothing is created.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from vreact.controller import Outcome
from vreact.families import DEFAULT, UnknownFamily, family_of, score_outcome
from vreact.records import DB_NAME, read_run
from vreact.records.store import Store


class RescoreError(ValueError):
    """What stops a rescore before anything is made: one line."""


def _copy(source: Path, to: Path) -> None:
    """The source's records into ``to``, by their files' bytes (the database and its
    write-ahead log, when it has one): SQLite never opens the source, so nothing is written
    beside it, not even a shared-memory file."""
    shutil.copyfile(source, to)
    wal = source.with_name(source.name + "-wal")
    if wal.is_file():
        shutil.copyfile(wal, to.with_name(to.name + "-wal"))


def rescore(
    run_dir: Path,
    scorer: str,
    out: Path,
    run_id: int | None = None,
    sandbox: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[int, str]:
    """Score run ``run_id`` (default: the latest) of ``run_dir`` by ``scorer`` into a copy of its
    records in ``out``; returns the run's id and the sandbox the programs ran in."""
    from vreact.sandbox import unavailable

    source = run_dir / DB_NAME
    if not source.is_file():
        raise RescoreError(f"{run_dir}: no run records ({DB_NAME})")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise RescoreError(f"{out}: not an empty folder (rescore writes a new copy of the records)")
    with tempfile.TemporaryDirectory(prefix="vreact-rescore-") as tmp:
        copy = Path(tmp) / DB_NAME
        _copy(source, copy)
        store = Store(copy)  # the copy is migrated, never the source
        try:
            records = read_run(store, run_id, transcripts=False, artifacts=True)
            if records.run is None:
                raise RescoreError(f"{run_dir}: no run {run_id}" if run_id else f"{run_dir}: no run")
            try:
                family = family_of(records.run.family or DEFAULT)
            except UnknownFamily as e:  # a plugin's family, its plugin not loaded
                raise RescoreError(
                    f"{run_dir}: {e}; give --plugin MODULE, the plugin that registers it"
                ) from None
            known = family.scorer_names
            if scorer not in known:
                has = ", ".join(known) if known else "one scorer, its own"
                raise RescoreError(f"the {family.name} family has no scorer {scorer!r} (it has {has})")
            held = {name for a in records.attempts for name in a.scores}
            if scorer in held:
                raise RescoreError(f"run {records.id} is already scored by {scorer}")
            kind = sandbox or str(records.run.config.get("sandbox") or "bwrap")
            try:  # a family that runs code places the tasks in a sandbox of that kind
                named = {"sandbox": kind} if family.runs_code else {}
                tasks = family.rescore_tasks(scorer, records.tasks.values(), **named)
            except ValueError as e:
                raise RescoreError(str(e)) from None
            if family.runs_code:
                why = unavailable(kind)  # type: ignore[arg-type]
                if why is not None:
                    raise RescoreError(f"{why} (or --sandbox none: unsandboxed, and recorded so)")
            ended = [a for a in records.attempts if a.outcome in ("answer", "abstain")]
            scores = {}
            for i, a in enumerate(ended, 1):
                judged = {
                    v.artifact_hash: v.artifact
                    for v in a.verdicts
                    if v.artifact_hash and v.artifact is not None
                }
                outcome = Outcome(a.outcome, answer=a.answer, evidence=list(a.evidence))  # type: ignore[arg-type]
                scores[a.id] = score_outcome(family, scorer, tasks[a.task_id], outcome, judged)
                if progress is not None and (i % 10 == 0 or i == len(ended)):
                    progress(f"rescored {i}/{len(ended)} attempts")
            from vreact.records.provenance import collect

            data = collect([], dataset_files=family.scorer_files(scorer), libraries=family.libraries)
            data["rescore"] = {"scorer": scorer, "sandbox": kind, "at": time.time()}
            store.add_scores(scores)
            store.record_provenance(records.id, data)  # type: ignore[arg-type]
            store.flush()
        finally:
            store.close()
        out.mkdir(parents=True, exist_ok=True)
        shutil.move(str(copy), out / DB_NAME)
    return int(records.id), kind  # type: ignore[arg-type]
