"""A damaged response cache never answers: a file that is no database is moved aside with a
timestamp, vreact warns once and starts an empty cache; a page damaged inside it is a miss (asked
again), and the run completes."""

from __future__ import annotations

from vreact.model import Completion, ResponseCache


def test_a_cache_that_is_no_database_is_moved_aside_and_starts_empty(tmp_path, capsys):
    path = tmp_path / "responses.db"
    path.write_bytes(b"this is not an SQLite file" * 100)
    cache = ResponseCache(tmp_path)
    assert cache.count() == 0 and cache.get("k") is None
    cache.put("k", "openai/m", Completion("hello", 1, 1, 1.0))
    assert cache.get("k").text == "hello"
    [aside] = list(tmp_path.glob("responses.db.damaged-*"))
    assert aside.read_bytes().startswith(b"this is not an SQLite file")
    err = capsys.readouterr().err
    assert err.count("warning:") == 1 and "moved aside" in err


def test_a_damaged_page_is_a_miss_never_an_answer(tmp_path, capsys):
    cache = ResponseCache(tmp_path)
    for i in range(400):  # a few pages of entries
        cache.put(f"k{i}", "openai/m", Completion("x" * 200, 1, 1, 1.0))
    cache.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    cache._conn().close()
    cache._local.conn = None
    cache.db.conn.close()
    path = tmp_path / "responses.db"
    data = bytearray(path.read_bytes())
    data[4096 * 3 : 4096 * 6] = b"\xff" * (4096 * 3)  # garbage over three pages of the table
    path.write_bytes(bytes(data))
    again = ResponseCache(tmp_path)
    answers = [again.get(f"k{i}") for i in range(400)]
    assert all(a is None or a.text == "x" * 200 for a in answers)  # nothing damaged is served
    assert any(a is None for a in answers)
    assert "warning:" in capsys.readouterr().err
