"""chain_tables.py DB: a run's rejections by configuration, check and cause, and its steps by who
issued them (the designer's searches, the executor's bridges, searches, reads and finishes), as
Markdown tables: the tuning tables of docs/evidence/ (issue 24)."""

from __future__ import annotations

import sqlite3
import sys
from contextlib import closing


def main(db: str) -> None:
    sql = (
        "select a.config, v.verifier || '.' || v.check_name as check_, v.cause, count(*) as n,"
        " count(distinct a.id) as attempts from verdicts v join attempts a on a.id = v.attempt_id"
        " where v.decision = 'reject' and a.run_id = (select max(id) from runs)"
        " group by 1, 2, 3 order by 1, 4 desc, 2"
    )
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        rows = conn.execute(sql).fetchall()
    print("| config | check | cause | rejections | attempts |")
    print("|---|---|---|--:|--:|")
    for config, check, cause, n, attempts in rows:
        print(f"| {config} | {check} | {cause} | {n} | {attempts} |")
    steps = (
        "select a.config, count(*), sum(s.source = 'designer'), sum(s.action = 'bridge'),"
        " sum(s.action = 'search' and coalesce(s.source, 'executor') = 'executor'),"
        " sum(s.action = 'read'), sum(s.action = 'finish'), sum(s.action is null)"
        " from steps s join attempts a on a.id = s.attempt_id"
        " where a.run_id = (select max(id) from runs) group by 1 order by 1"
    )
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        rows = conn.execute(steps).fetchall()
    print()
    print("| config | steps | designer searches | bridges | executor searches | reads | finishes | not a step |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|")
    for row in rows:
        print("| " + " | ".join(str(x) for x in row) + " |")


if __name__ == "__main__":
    main(sys.argv[1])
