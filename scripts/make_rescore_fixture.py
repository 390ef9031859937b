"""The small code run ``tests/data/humanevalplus/run`` that ``make test`` rescores under HumanEval+:
four problems of the 1.5B code evaluation (docs/evidence/2026-12-03-code-evaluation-1.5b), both
configurations, every record of theirs kept and nothing else, at the migration the evidence
folder was made with (024: before scorers were named, so the test migrates it too).

    python scripts/make_rescore_fixture.py
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "docs" / "evidence" / "2026-12-03-code-evaluation-1.5b" / "vreact.db"
OUT = ROOT / "tests" / "data" / "humanevalplus" / "run" / "vreact.db"
#: /86: right by HumanEval's test, wrong by HumanEval+'s (N and VG); /104: a correction, the
#: answer wrong by HumanEval+; /88: a correction; /90: an abstention after three rejections
TASKS = ("HumanEval/86", "HumanEval/88", "HumanEval/90", "HumanEval/104")


def main() -> None:
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.unlink(missing_ok=True)
    shutil.copyfile(SOURCE, OUT)  # the evidence file is only read
    db = sqlite3.connect(OUT)
    marks = ",".join("?" * len(TASKS))
    gone = f"select id from attempts where task_id not in ({marks})"
    for (table,) in db.execute("select name from sqlite_master where type = 'table'").fetchall():
        columns = {r[1] for r in db.execute(f"pragma table_info({table})")}
        if "attempt_id" in columns:
            db.execute(f"delete from {table} where attempt_id in ({gone})", TASKS)
    db.execute(f"delete from attempts where task_id not in ({marks})", TASKS)
    db.execute(f"delete from tasks where id not in ({marks})", TASKS)
    db.execute(
        "delete from artifacts where hash not in (select artifact_hash from verdicts where artifact_hash"
        " is not null union select artifact_hash from ledger where artifact_hash is not null)"
    )
    db.execute(
        "delete from inputs where hash not in (select input_hash from verdicts where input_hash is not null)"
    )
    db.commit()
    db.execute("pragma journal_mode = delete")
    db.execute("vacuum")
    db.close()


if __name__ == "__main__":
    main()
