"""The readers never write into the folder they read, whatever vreact made it: every run folder
under docs/evidence (each made by an older vreact, most lacking migrations this one has), copied
and made read-only, is reported, exported, checked and viewed (the page elsewhere), with every
file's bytes unchanged and no file added. As root chmod stops no write, so what counts is the
sha256 of every file and the set of files, before and after; what tells vreact the folder cannot
be written is ``os.access`` (``read_only`` answers as for another user).

A folder that lacks a migration is read from a migrated private copy (``open_to_read``):
``test_some_evidence_needs_migrations`` makes sure that path is the one taken (19 of the 21
folders at the time of writing). Every folder is read, none sampled: about half a second each.
A replay reads its source the same way, from beside it (its records name it by its path from
there): a replay's folder is copied with its source."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import REPO
from tests.records.test_safe import one_line, read_only
from vreact.cli import cli
from vreact.records import DB_NAME, NeedsMigration, Store

EVIDENCE = sorted(db.parent for db in (REPO / "docs" / "evidence").rglob(DB_NAME))


def copied(folder: Path, root: Path) -> Path:
    """A copy of an evidence folder under ``root``; a replay's with its source beside it, where
    its records say the source is (read again by its report)."""
    copy = Path(shutil.copytree(folder, root / folder.name))
    db = sqlite3.connect(f"file:{folder / DB_NAME}?immutable=1", uri=True)
    try:
        stored = [json.loads(c) for (c,) in db.execute("SELECT config_json FROM runs")]
    finally:
        db.close()
    for config in stored:
        if config.get("kind") == "replay" and not os.path.isabs(config["source"]):
            beside = Path(os.path.normpath(copy / config["source"]))
            if not beside.exists():
                shutil.copytree(os.path.normpath(folder / config["source"]), beside)
    return copy


def fingerprint(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` (by its path there) and its sha256."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def configs(folder: Path) -> set[str]:
    """The configurations whose attempts the folder's records hold (opened immutable: no
    ``-shm`` or ``-wal`` file is made beside them)."""
    db = sqlite3.connect(f"file:{folder / DB_NAME}?immutable=1", uri=True)
    try:
        return {c for (c,) in db.execute("SELECT DISTINCT config FROM attempts")}
    finally:
        db.close()


def needs_migrations(folder: Path) -> bool:
    """Whether the folder's records lack a migration of this vreact (an open that may not write
    refuses them so)."""
    try:
        Store(folder / DB_NAME, read_only=True).close()
    except NeedsMigration:
        return True
    return False


def test_some_evidence_needs_migrations():
    assert len(EVIDENCE) >= 20, EVIDENCE  # the folders are found where they are kept
    older = [f.name for f in EVIDENCE if needs_migrations(f)]
    assert older, "no evidence folder lacks a migration: the private copy is not exercised"


def invoke(*args: object) -> str:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == 0, (args, result.output)
    return result.output


@pytest.mark.parametrize("evidence", EVIDENCE, ids=lambda p: p.name)
def test_an_evidence_folder_is_read_without_a_byte_written(evidence, tmp_path, monkeypatch):
    folder = copied(evidence, tmp_path / "ro")
    out = tmp_path / "out"  # where what the commands write goes
    out.mkdir()
    before = fingerprint(folder)
    assert invoke("report", folder, "--json").startswith("{")  # writable, and not written either
    assert fingerprint(folder) == before
    read_only(folder, monkeypatch)
    try:
        shown = invoke("report", folder)
        # a probe's or a replay's folder: its tables
        assert "Run folder:" in shown or shown.startswith(("Probe 1:", "Replay of run"))
        assert invoke("report", folder, "--json").startswith("{")
        assert invoke("export", folder).startswith("id,")
        invoke("export", folder, "--table", "verdicts", "--format", "jsonl", "--out", out / "verdicts.jsonl")
        assert invoke("check", folder).startswith("OK: ")
        assert invoke("view", folder, "--out", out / "page.html").strip() == str(out / "page.html")
        one_line(CliRunner().invoke(cli, ["view", str(folder)]), "--out")  # its place only, refused
        if "hotpotqa" in evidence.name:  # the official scripts' files, from the same records
            invoke("report", folder, "--predictions", out / "predictions")
            written = sorted(p.name for p in (out / "predictions").iterdir())
            assert written == sorted(f"{c}.json" for c in configs(folder))  # one a configuration
    finally:
        for p in [folder, *folder.iterdir()]:
            p.chmod(p.stat().st_mode | stat.S_IWUSR)
    assert fingerprint(folder) == before
    assert (out / "page.html").is_file() and (out / "verdicts.jsonl").is_file()


def test_a_replay_and_its_report_read_an_older_source_without_writing_it(tmp_path, monkeypatch):
    """replay reads its source as a reader does (a migrated private copy for an older vreact's
    records), and so does the report of the replay folder, which reads the source again."""
    evidence = REPO / "docs" / "evidence" / "2026-12-02-qwen1.5b-chain-eval"
    assert needs_migrations(evidence)
    source = shutil.copytree(evidence, tmp_path / "ro" / evidence.name)
    before = fingerprint(source)
    read_only(source, monkeypatch)
    try:
        assert '"kind": "replay"' in invoke("replay", source, "--out", tmp_path / "replay", "--json")
        assert '"kind": "replay"' in invoke("report", tmp_path / "replay", "--json")
    finally:
        for p in [source, *source.iterdir()]:
            p.chmod(p.stat().st_mode | stat.S_IWUSR)
    assert fingerprint(source) == before
