"""The prompt-injection corpus (issue 39): every template has a family, its source and its
licence, the corpus is what the gathering script writes, and the held-out file is sealed: its
sha256 is the one recorded, and no module or test reads it before the defences are frozen."""

from __future__ import annotations

import hashlib
import json

from tests.conftest import REPO

CORPUS = REPO / "vreact" / "qa" / "injections" / "corpus.jsonl"
HELDOUT = REPO / "tests" / "data" / "attacks" / "heldout.jsonl"
FAMILIES = {"ignore_previous", "fake_system", "addressed", "dictated", "role_play"}


def test_every_template_has_a_family_a_source_and_a_licence() -> None:
    records = [json.loads(line) for line in CORPUS.read_text().splitlines()]
    assert records and len({r["id"] for r in records}) == len(records)
    for r in records:
        assert r["family"] in FAMILIES, r["id"]
        assert r["licence"] in {"MIT", "Apache-2.0"}
        assert set(r["source"]) == {"package", "version", "file", "name"}
        assert (CORPUS.parent / f"LICENSE-{r['source']['package']}").is_file()
        assert "{target}" in r["text"] or "{goal}" in r["text"] or r["family"] == "role_play", r["id"]


def test_the_held_out_file_is_sealed() -> None:
    """Its bytes hash to the recorded sha256 (read as bytes, never parsed), and nothing but the
    script that writes it and this test names it."""
    recorded = (HELDOUT.with_suffix(".sha256")).read_text().split()[0]
    assert hashlib.sha256(HELDOUT.read_bytes()).hexdigest() == recorded
    allowed = {"scripts/gather_attacks.py", "tests/tasks/test_injection_corpus.py"}
    for path in [*REPO.glob("vreact/**/*.py"), *REPO.glob("tests/**/*.py"), *REPO.glob("scripts/*.py")]:
        name = str(path.relative_to(REPO))
        if name not in allowed:
            assert "heldout" not in path.read_text(encoding="utf-8"), name
