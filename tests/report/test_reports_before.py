"""Old run folders report as before the task-family change.

``vreact report DIR --json`` of two recorded run folders in docs/evidence/ was saved under
tests/data/reports_before/ by the code before question answering moved behind a task-family
seam: an attack run (N and VG, injection and poisoning) and a chain-verifier run (VG+chain,
2- and 3-hop tasks). The report of the same folders must stay the same; keys the fixture lacks
(new fields) are allowed at any depth. The report reads an old records file through a
migrated private copy and writes nothing; each folder is copied first all the same, so a
reader that wrote could never touch the evidence.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import REPO
from vreact.cli import cli

EVIDENCE = REPO / "docs" / "evidence"
BEFORE = REPO / "tests" / "data" / "reports_before"
#: Keys whose values are not compared. None: the JSON of these reports holds no time (of day
#: or duration) and no path (checked when the fixtures were saved, and schemas/report.schema.json
#: names none); a key added here must say which time or path it carries.
IGNORED_KEYS: frozenset[str] = frozenset()


def differences(before: Any, now: Any, where: str = "") -> list[str]:
    """Where ``now`` differs from ``before``, apart from new keys and IGNORED_KEYS."""
    if isinstance(before, dict) and isinstance(now, dict):
        return [
            d
            for key, value in before.items()
            if key not in IGNORED_KEYS
            for d in (
                differences(value, now[key], f"{where}/{key}") if key in now else [f"{where}/{key}: gone"]
            )
        ]
    if isinstance(before, list) and isinstance(now, list) and len(before) == len(now):
        return [
            d
            for i, (b, n) in enumerate(zip(before, now, strict=True))
            for d in differences(b, n, f"{where}[{i}]")
        ]
    if type(before) is not type(now) or before != now:
        return [f"{where}: {before!r} before, {now!r} now"]
    return []


@pytest.mark.parametrize("fixture", sorted(BEFORE.glob("*.json")), ids=lambda p: p.stem)
def test_an_old_run_folder_reports_as_before(fixture: Path, tmp_path: Path) -> None:
    folder = shutil.copytree(EVIDENCE / fixture.stem, tmp_path / fixture.stem)
    result = CliRunner().invoke(cli, ["report", str(folder), "--json"])
    assert result.exit_code == 0, result.output
    found = differences(json.loads(fixture.read_text()), json.loads(result.stdout))
    assert not found, f"{len(found)} differences:\n" + "\n".join(found[:50])


def test_both_fixtures_are_there() -> None:
    assert len(sorted(BEFORE.glob("*.json"))) >= 2
