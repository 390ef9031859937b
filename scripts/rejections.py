"""rejections.py DB: a run's rejections by configuration, check and cause, as a Markdown table
(the tuning tables of docs/evidence/: which checks stop what, and how often)."""

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


if __name__ == "__main__":
    main(sys.argv[1])
