"""Records opened safely: ``vreact report`` and ``vreact view --out`` read a finished run without
writing it (a folder on read-only storage can be reported); a vreact.db that is not this vreact's
records is refused in one line (exit 2), left as it was, by report, view and a resumed run."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import stat
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import FULL, assert_records_whole
from tests.fakes.chaos_server import ChaosServer
from tests.helpers import abstain, by_role, finish, read, search
from vreact.cli import cli
from vreact.config import Configuration
from vreact.experiment import ResolvedExperiment, run_experiment
from vreact.experiment.resolved import Setup
from vreact.qa.dataset import load_tasks
from vreact.records import (
    DB_NAME,
    MIGRATIONS,
    DamagedRecords,
    ForeignRecords,
    NeedsMigration,
    NewerRecords,
    RecordsError,
    Store,
    open_to_read,
    read_run,
)

NISSEDAL = "2hop__269805_135710"  # hop 1 -> Norway (paragraph 10), hop 2 -> north (paragraph 6)
RETRIEVED = [search("Nissedal"), read("10"), read("6")]


def _experiment(spec, verifiers, roles) -> ResolvedExperiment:
    """VG: a rejection (a cited paragraph never retrieved), then the right answer; N: abstains;
    crash: its script runs out at once."""
    tasks = [t for t in load_tasks(FULL) if t.id == NISSEDAL]
    configs = [
        Configuration(name="VG", gates=True, guards=True),
        Configuration(name="N"),
        Configuration(name="crash"),
    ]
    to_right = by_role(executor=[finish("south", ["6"]), *RETRIEVED, finish("north", ["10", "6"])])
    setups = {
        "VG": Setup({"default": to_right}, spec, verifiers),
        "N": Setup({"default": by_role(executor=[search("Nissedal"), abstain("not here")])}, spec, verifiers),
        "crash": Setup({"default": by_role(executor=[])}, spec, verifiers),
    }
    return ResolvedExperiment(tasks, configs, {}, spec, verifiers, roles, setups=setups)


@pytest.fixture(scope="module")
def made(tmp_path_factory, request) -> Path:
    spec, verifiers, roles = (request.getfixturevalue(f) for f in ("spec", "verifiers", "roles"))
    out = tmp_path_factory.mktemp("safe") / "run"
    run_experiment(_experiment(spec, verifiers, roles), out)
    assert_records_whole(out)
    return out


@pytest.fixture
def run(made, tmp_path) -> Path:
    """A copy of the scripted run's folder, to change."""
    copy = tmp_path / "run"
    shutil.copytree(made, copy)
    return copy


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def beside(db: Path) -> list[str]:
    """The files SQLite makes beside a database it writes."""
    return sorted(p.name for p in db.parent.iterdir() if p.name.startswith(db.name + "-"))


def invoke(*args: str):
    return CliRunner().invoke(cli, [str(a) for a in args])


def one_line(result, *words: str) -> str:
    """The error a command printed: one line, no traceback, exit 2, naming ``words``."""
    text = result.output.strip()
    assert result.exit_code == 2, result.output
    assert "Traceback" not in text and len(text.splitlines()) == 1, text
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    for w in words:
        assert w in text, text
    return text


def read_only(folder: Path, monkeypatch) -> None:
    """Make ``folder`` and its files read-only. As root chmod stops no write: the check that
    nothing was written is then the files' hashes (and no -wal/-shm), and what tells vreact the
    folder cannot be written is os.access, answered as for another user."""
    for p in [folder, *folder.iterdir()]:
        mode = p.stat().st_mode
        p.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    if os.geteuid() == 0:
        real = os.access

        def access(path, mode, *args, **kwargs):
            inside = (
                Path(path).resolve() == folder.resolve() or Path(path).resolve().parent == folder.resolve()
            )
            if mode & os.W_OK and inside:
                return False
            return real(path, mode, *args, **kwargs)

        monkeypatch.setattr(os, "access", access)


@pytest.fixture
def restore_modes(run):
    yield
    for p in [run, *run.iterdir()]:
        p.chmod(p.stat().st_mode | stat.S_IWUSR)


# --- records opened read-only ---------------------------------------------------------------


def test_report_and_view_out_of_a_read_only_folder_write_nothing(run, tmp_path, monkeypatch, restore_modes):
    db = run / DB_NAME
    before, files = sha(db), sorted(p.name for p in run.iterdir())
    read_only(run, monkeypatch)
    reported = invoke("report", run, "--json")
    assert reported.exit_code == 0, reported.output
    assert '"VG"' in reported.output
    page = tmp_path / "page.html"
    viewed = invoke("view", run, "--out", page)
    assert viewed.exit_code == 0, viewed.output
    assert page.is_file() and "vreact" in page.read_text()
    assert sha(db) == before and beside(db) == [] and sorted(p.name for p in run.iterdir()) == files


def test_view_of_a_read_only_folder_without_out_says_to_give_it(run, monkeypatch, restore_modes):
    db = run / DB_NAME
    before = sha(db)
    read_only(run, monkeypatch)
    one_line(invoke("view", run), "--out")
    assert sha(db) == before and not (run / "report.html").exists() and beside(db) == []


def test_reading_never_writes_a_writable_folder_either(run):
    db = run / DB_NAME
    before = sha(db)
    assert invoke("report", run).exit_code == 0
    assert len(read_run(run).attempts) == 3
    assert sha(db) == before and beside(db) == []


def test_a_read_only_open_refuses_every_write(run):
    store = Store(run / DB_NAME, read_only=True)
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        store.new_run({}, "m", "d")
    store.close()


#: What each of the latest migrations adds, as the statements that undo it (as an older
#: vreact's folder lacks it).
ADDED = {
    "_m014_attempt_calls": ["alter table attempts drop column calls"],
    "_m015_call_cut": ["alter table model_calls drop column cut"],
    "_m016_step_cut": ["alter table steps drop column cut"],
    "_m017_check_time": ["alter table verdicts drop column seconds"],
    "_m018_probe_skips": ["drop table probe_skips"],
    "_m019_gate_inputs": ["alter table verdicts drop column input_hash", "drop table inputs"],
    "_m020_step_source": ["alter table steps drop column source", "alter table steps drop column hops"],
    "_m021_task_attacks": [
        f"alter table tasks drop column {c}"
        for c in ("attack", "base_id", "attack_kind", "goal", "target", "added")
    ],
    "_m022_call_charges": [f"alter table model_calls drop column {c}" for c in ("verifier", "caused_by")],
    "_m023_task_families": [
        "drop table scores",
        *(f"alter table runs drop column {c}" for c in ("family", "family_version")),
        *(f"alter table tasks drop column {c}" for c in ("family", "record")),
    ],
    "_m024_try_scores": ["alter table scores drop column tries"],
    "_m025_step_seconds": ["alter table steps drop column seconds"],
    "_m026_provenance": ["alter table attempts drop column provenance_id", "drop table provenance"],
    "_m027_scorers": [
        "drop table scores",
        "create table scores (attempt_id integer primary key references attempts(id), correct integer,"
        " metrics text, tries text)",
    ],
    # it adds no column or table: the family and scores it gives records made before families
    "_m028_scores_before_families": [],
    "_m029_call_stop_reason": ["alter table model_calls drop column stop_reason"],
    "_m030_agreements": ["drop table agreements"],
}


def old_folder(folder: Path, of: Path | None = None) -> Path:
    """A folder whose records lack the last migration (as an older vreact left them): a copy of
    the run folder ``of``, else records of no run."""
    if of is not None:
        shutil.copytree(of, folder)
    else:
        folder.mkdir()
        store = Store(folder / DB_NAME)
        store.close()
    conn = sqlite3.connect(folder / DB_NAME)
    last = MIGRATIONS[-1].__name__
    conn.execute("delete from _migrations where name = ?", [last])
    for undo in ADDED[last]:  # a new migration names what it adds here
        conn.execute(undo)
    conn.commit()
    conn.close()
    return folder


def migrated(db: Path) -> set[str]:
    """The migrations the file at ``db`` records, read without writing it."""
    conn = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
    try:
        return {r[0] for r in conn.execute("select name from _migrations")}
    finally:
        conn.close()


def test_records_that_need_a_migration_in_a_read_only_folder_are_read_from_a_private_copy(
    made, tmp_path, monkeypatch
):
    """An older vreact's records on read-only storage report, view and check as any: migrated in
    a copy of their own, the file and its folder as they were."""
    folder = old_folder(tmp_path / "old", made)
    db = folder / DB_NAME
    before, files = sha(db), sorted(p.name for p in folder.iterdir())
    read_only(folder, monkeypatch)
    try:
        reported = invoke("report", folder, "--json")
        assert reported.exit_code == 0, reported.output
        assert '"N"' in reported.output and '"VG"' in reported.output
        viewed = invoke("view", folder, "--out", tmp_path / "p.html")
        assert viewed.exit_code == 0 and (tmp_path / "p.html").is_file(), viewed.output
        checked = invoke("check", folder)
        assert checked.exit_code == 0, checked.output
        assert "1 migration(s) short: checked on a migrated private copy" in checked.output
        one_line(invoke("view", folder), "--out")  # the page's place only
        with pytest.raises(NeedsMigration, match="open_to_read"):
            Store(db, read_only=True)  # a read-only open of the file itself still cannot migrate it
        assert sha(db) == before and beside(db) == [] and sorted(p.name for p in folder.iterdir()) == files
    finally:
        for p in [folder, *folder.iterdir()]:
            p.chmod(p.stat().st_mode | stat.S_IWUSR)


def test_records_that_need_a_migration_are_not_migrated_by_a_reader_where_they_can_be_written(made, tmp_path):
    """Writable or not, a reader leaves an older vreact's records as they are; view without
    --out adds its page, and nothing else."""
    folder = old_folder(tmp_path / "old", made)
    db = folder / DB_NAME
    before, files = sha(db), sorted(p.name for p in folder.iterdir())
    for args in (["report", folder], ["view", folder, "--out", tmp_path / "p.html"], ["check", folder]):
        assert invoke(*args).exit_code == 0, args
    assert len(read_run(folder).attempts) == 3  # the Python reader too
    assert MIGRATIONS[-1].__name__ not in migrated(db)
    assert sha(db) == before and beside(db) == [] and sorted(p.name for p in folder.iterdir()) == files
    assert invoke("view", folder).exit_code == 0
    assert sorted(p.name for p in folder.iterdir()) == sorted([*files, "report.html"])
    store = open_to_read(db)  # the copy refuses writes, as a read-only open does
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        store.new_run({}, "m", "d")
    store.close()
    assert sha(db) == before and beside(db) == []


# --- broken records, one line -----------------------------------------------------------------


def _truncated(db: Path) -> None:
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 2])


def _garbage(db: Path) -> None:
    db.write_bytes(os.urandom(8192))


def _empty(db: Path) -> None:
    db.write_bytes(b"")


def _foreign(db: Path) -> None:
    db.unlink()
    conn = sqlite3.connect(db)
    conn.execute("create table photos (id integer primary key, path text)")
    conn.execute("insert into photos (path) values ('a.jpg')")
    conn.commit()
    conn.close()


def _newer(db: Path) -> None:
    conn = sqlite3.connect(db)
    conn.execute("insert into _migrations (name, applied) values ('_m999_from_the_future', 0)")
    conn.commit()
    conn.close()


BROKEN = {
    "truncated": (_truncated, DamagedRecords, "truncated or overwritten"),
    "garbage": (_garbage, DamagedRecords, "not a SQLite database"),
    "empty": (_empty, DamagedRecords, "empty"),
    "foreign": (_foreign, ForeignRecords, "another program"),
    "newer": (_newer, NewerRecords, "newer vreact"),
}


@pytest.mark.damages_records
@pytest.mark.parametrize("kind", BROKEN)
def test_broken_records_are_one_line_and_left_as_they_are(kind, run, tmp_path):
    damage, error, words = BROKEN[kind]
    db = run / DB_NAME
    damage(db)
    before = sha(db)
    one_line(invoke("report", run), words, str(db))
    one_line(invoke("view", run, "--out", tmp_path / "page.html"), words)
    assert not (tmp_path / "page.html").exists()
    with pytest.raises(error, match=words):
        Store(db)  # the runner's open, to resume a run
    with pytest.raises(RecordsError):
        Store(db, read_only=True)
    assert sha(db) == before and beside(db) == []


@pytest.mark.damages_records
@pytest.mark.parametrize("kind", BROKEN)
def test_a_run_into_a_folder_with_broken_records_refuses_it_and_leaves_it(kind, run, spec, verifiers, roles):
    damage, error, words = BROKEN[kind]
    db = run / DB_NAME
    damage(db)
    before = sha(db)
    with pytest.raises(error, match=words):
        run_experiment(_experiment(spec, verifiers, roles), run)
    assert sha(db) == before and beside(db) == []


@pytest.mark.damages_records
def test_vreact_run_into_a_folder_with_broken_records_is_one_line(run):
    db = run / DB_NAME
    _garbage(db)
    before = sha(db)
    with ChaosServer(mix={"nonsense": 1.0}) as server:  # up, as a run checks before it starts
        model = ["--model", "openai/none", "--base-url", server.base_url]  # never called
        result = invoke("run", "--dataset", "sample", "--limit", "1", "--configs", "N", *model, "--out", run)
        assert server.requests == []
    assert sha(db) == before and beside(db) == []
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    [error] = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert "not a SQLite database" in error


def test_a_run_being_written_is_read_with_its_log(run):
    db = run / DB_NAME
    writer = Store(db)  # a live writer: its -wal and -shm are there
    run_id = writer.new_run({"live": True}, "m", "d")
    try:
        assert beside(db) == [f"{DB_NAME}-shm", f"{DB_NAME}-wal"]
        assert read_run(run, run_id).run is not None  # read from the log, not the file alone
    finally:
        writer.close()


def overwrite_page_of(db: Path, table: str) -> None:
    """Garbage over the root page of ``table``: SQLite opens the file, and fails reading it."""
    conn = sqlite3.connect(db)
    [root] = conn.execute("select rootpage from sqlite_master where name = ?", [table]).fetchone()
    [size] = conn.execute("pragma page_size").fetchone()
    conn.close()
    data = bytearray(db.read_bytes())
    data[(root - 1) * size : root * size] = b"\xa5" * size
    db.write_bytes(bytes(data))


@pytest.mark.damages_records
def test_records_damaged_inside_are_one_line_where_sqlite_finds_it(run, tmp_path):
    db = run / DB_NAME
    overwrite_page_of(db, "attempts")
    before = sha(db)
    one_line(invoke("report", run), str(db), "malformed", "vreact check")
    one_line(invoke("view", run, "--out", tmp_path / "page.html"), "malformed")
    assert sha(db) == before and beside(db) == []


def test_a_folder_on_a_read_only_mount_reports_and_views(run, tmp_path, monkeypatch):
    """A real read-only filesystem: a tmpfs holding the finished run, remounted read-only (where
    this test may mount; elsewhere the read-only folder above stands for it)."""
    mnt = tmp_path / "ro"
    mnt.mkdir()
    if subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mnt)], capture_output=True
    ).returncode:
        read_only(run, monkeypatch)  # no mount here: the injected read-only folder
        folder = run
    else:
        shutil.copytree(run, mnt / "run")
        subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
        folder = mnt / "run"
        with pytest.raises(OSError):  # the mount really is read-only, root or not
            (folder / "probe").write_text("x")
    try:
        db = folder / DB_NAME
        before = sha(db)
        reported = invoke("report", folder, "--json")
        assert reported.exit_code == 0, reported.output
        page = tmp_path / "page.html"
        viewed = invoke("view", folder, "--out", page)
        assert viewed.exit_code == 0 and page.is_file(), viewed.output
        checked = invoke("check", folder)
        assert checked.exit_code == 0, checked.output
        no_out = invoke("view", folder)
        one_line(no_out, "--out")
        assert sha(db) == before and beside(db) == []
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)
