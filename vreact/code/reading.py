"""What the code gates read from a run's problems (``Code.reading``), and a problem's dataset
audit as findings (``Code.audit``)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from vreact.code.data import HIDDEN, PLUS
from vreact.code.examples import FORMS, stated
from vreact.families import Finding, Reading


def findings(task: str, entry_point: str, audit: list[Any]) -> list[Finding]:
    """A problem's audit entries as findings: the example as a call, and what the reference gives."""
    from vreact.code.gates import _call

    return [
        Finding(task=task, read=f"{_call(entry_point, a)} == {e}", gold=f"the reference solution {g}")
        for a, e, g in audit
    ]


def _ids(ids: list[str], shown: int = 6) -> str:
    more = f" and {len(ids) - shown} more" if len(ids) > shown else ""
    return ", ".join(ids[:shown]) + more


def _forms(records: list[Any]) -> Counter[str]:
    """How many of the records' examples stand in each form of the prompt (``FORMS``' order), as
    the rule reads the prompt today (an example a record holds that the rule no longer reads, or
    a record without its prompt, is not counted)."""
    found: Counter[str] = Counter()
    for r in records:
        held = {tuple(e) for e in r.get("examples") or ()}
        if held and r.get("prompt") and r.get("entry_point"):
            found.update(e.form for e in stated(str(r["prompt"]), str(r["entry_point"])) if e[:2] in held)
    return Counter({f: found[f] for f in FORMS if found[f]})


def reading(records: list[Any]) -> Reading | None:
    """What the code gates read from these problems' records (``Code.reading``)."""
    if not records:
        return None
    n = len(records)
    ids = [str(r.get("id")) for r in records]
    stated = [len(r.get("examples") or ()) for r in records]
    dropped = [len(r.get("dropped") or ()) for r in records]  # records made before 2026-12-06
    read = [s + d for s, d in zip(stated, dropped, strict=True)]
    lines = [f"examples: {sum(read)} stated in the prompts of {sum(1 for x in read if x)} of {n} problem(s)"]
    forms = _forms(records)
    if forms:
        lines[0] += " (by form: " + ", ".join(f"{k} {v}" for k, v in forms.items()) + ")"
    if any(dropped):
        filtered = [i for i, d in zip(ids, dropped, strict=True) if d]
        lines[0] += (
            f"; {sum(dropped)} of them were not run, filtered out by the reference solution (these"
            f" records were made before 2026-12-06, when vreact did so): {_ids(filtered)}"
        )
    else:
        lines[0] += ", each run by the gates as stated"
    found = [
        f
        for r in records
        for f in findings(str(r.get("id")), str(r.get("entry_point")), r.get("audit") or [])
    ]
    if found:
        per = Counter(f.task for f in found)
        listed = ", ".join(f"{k} ({v})" for k, v in per.items())
        lines.append(
            f"dataset audit: the reference solution contradicts {len(found)} of them, on"
            f" {len(per)} problem(s): {listed} (run as stated all the same)"
        )
    has = [set(r.get("scorers", [HIDDEN])) for r in records]  # records made before: the hidden test
    unscored = [i for i, h in zip(ids, has, strict=True) if not h]
    if unscored:
        lines.append(
            f"unscored: {len(unscored)} of {n} problem(s) have no hidden test (nor HumanEval+'s inputs):"
            f" their answers are not scored ({_ids(unscored)})"
        )
    for scorer, what in ((HIDDEN, "a hidden test"), (PLUS, "HumanEval+'s inputs and reference")):
        lacking = [i for i, h in zip(ids, has, strict=True) if h and scorer not in h]
        if lacking and any(scorer in h for h in has):
            lines.append(
                f"not scored by {scorer}: {len(lacking)} problem(s) without {what} ({_ids(lacking)})"
            )
    return Reading(lines=lines, findings=found)
