"""Shared fixtures: real MuSiQue records, the shipped declarative files, a fresh store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from vreact.dataset import Task, load_tasks
from vreact.memory import Store
from vreact.spec import RoleSchema, TaskSpec, VerifierSet, load_roles, load_spec, load_verifiers

REPO = Path(__file__).resolve().parents[1]
#: Real MuSiQue records (CC BY 4.0), shipped with the suite: tests/data/musique/README.md.
MUSIQUE = REPO / "tests" / "data" / "musique"
FULL = MUSIQUE / "musique_full_train_80.jsonl"
ANS = MUSIQUE / "musique_ans_train_100.jsonl"


def musique_records() -> list[dict[str, Any]]:
    """Every real MuSiQue record shipped with the suite (Full then Ans)."""
    out = []
    for path in (FULL, ANS):
        out += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return out


@pytest.fixture(autouse=True)
def _own_cache_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test gets its own response cache, never the user's."""
    monkeypatch.setenv("VREACT_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture(scope="session")
def full_tasks() -> list[Task]:
    return load_tasks(FULL)


@pytest.fixture(scope="session")
def spec() -> TaskSpec:
    return load_spec()


@pytest.fixture(scope="session")
def verifiers() -> VerifierSet:
    return load_verifiers()


@pytest.fixture(scope="session")
def roles() -> RoleSchema:
    return load_roles()


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "vreact.db")
