"""chain_tables.py DB: a run's rejections by configuration, check and cause, and its steps by who
issued them (the designer's searches, the executor's bridges, searches, reads and finishes), as
Markdown tables: the tuning tables of docs/evidence/ (issue 24)."""

from __future__ import annotations

import sqlite3
import sys
from contextlib import closing

LATEST = "a.run_id = (select max(id) from runs)"
REJECTIONS = (
    "select a.config, v.verifier || '.' || v.check_name, v.cause, count(*), count(distinct a.id)"
    f" from verdicts v join attempts a on a.id = v.attempt_id where v.decision = 'reject' and {LATEST}"
    " group by 1, 2, 3 order by 1, 4 desc, 2"
)
STEPS = (
    "select a.config, count(*), sum(s.source = 'designer'), sum(s.action = 'bridge'),"
    " sum(s.action = 'search' and coalesce(s.source, 'executor') = 'executor'),"
    " sum(s.action = 'read'), sum(s.action = 'finish'), sum(s.action is null)"
    f" from steps s join attempts a on a.id = s.attempt_id where {LATEST} group by 1 order by 1"
)


def table(db: str, sql: str, header: list[str], text: int) -> None:
    """The rows of ``sql`` under ``header``, its first ``text`` columns text, the rest numbers."""
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        rows = conn.execute(sql).fetchall()
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" if i < text else "--:" for i in range(len(header))) + "|")
    for row in rows:
        print("| " + " | ".join(str(x) for x in row) + " |")


def main(db: str) -> None:
    table(db, REJECTIONS, ["config", "check", "cause", "rejections", "attempts"], 3)
    print()
    steps = ["designer searches", "bridges", "executor searches", "reads", "finishes", "not a step"]
    table(db, STEPS, ["config", "steps", *steps], 1)


if __name__ == "__main__":
    main(sys.argv[1])
