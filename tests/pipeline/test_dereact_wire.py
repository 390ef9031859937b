"""What question answering's DeReAct roles are sent, byte for byte: the critic's, the context
manager's and the executor's messages and JSON schemas on scripted attempts (critic and context
manager together, each alone, a veto, an ungrounded State) are those the fixture holds, made at
commit 9a816b1, before the State's citations took a family-neutral name (``cites``). A model's
prompts are cached by their bytes: a changed one would miss every cached reply.

Written again with ``python -m tests.pipeline.test_dereact_wire PATH`` (from the repository's
root) only when a prompt is meant to change."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.helpers import attempt, by_role, criticised, finish, managed, read, role_of, search

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "golden" / "qa_dereact_wire.json"

ABSTAIN = {"thought": "", "action": "abstain", "input": "not found", "evidence": []}
NORTH = ("Norway is named after the north", ["6"])
NISSEDAL = ("Nissedal is in Norway", ["10"])


def scenarios() -> dict[str, tuple[dict[str, Any], dict[str, list[Any]]]]:
    """Each scripted attempt: its configuration's settings and its scripts by role."""
    return {
        "dereact": (
            {"critic": True, "context_manager": True},
            {
                "executor": [search("Nissedal"), read("6"), read("10"), finish("north", ["6", "10"])],
                "critic": [criticised("reject", 0.9, "read a paragraph"), *[criticised()] * 3],
                "context_manager": [
                    managed("continue", [NORTH]),
                    managed("continue", [NORTH, NISSEDAL]),
                    managed("success", [NORTH, NISSEDAL]),
                ],
            },
        ),
        "cm_veto_then_certified": (
            {"context_manager": True},
            {
                "executor": [read("6"), finish("Norway", ["6"]), read("10"), finish("north", ["6", "10"])],
                "context_manager": [
                    managed("continue", [NORTH]),
                    managed("continue", [NORTH], "the answer is not Norway"),
                    managed("continue", [NORTH, NISSEDAL]),
                    managed("success", [NORTH, NISSEDAL]),
                ],
            },
        ),
        "cm_ungrounded": (
            {"context_manager": True},
            {
                "executor": [
                    read("6"),
                    search("Nissedal"),
                    finish("north", ["6"]),
                    finish("north", ["6", "10"]),
                ],
                "context_manager": [
                    managed("continue", [NORTH]),
                    managed("continue", [("made up", ["17"])]),
                    managed("success", [("made up", ["17"])]),
                    managed("success", [NORTH]),
                ],
            },
        ),
        "critic_alone": (
            {"critic": True},
            {"executor": [search("Nissedal"), ABSTAIN], "critic": [criticised(), criticised()]},
        ),
    }


def captured() -> dict[str, list[dict[str, Any]]]:
    """Each scenario's calls in order: the role, its messages and its JSON schema (as JSON text,
    its keys in the order they are sent)."""
    from vreact.config import Configuration
    from vreact.qa.dataset import load_tasks
    from vreact.records import Store
    from vreact.spec import load_roles, load_spec, load_verifiers

    full = Path(__file__).resolve().parents[1] / "data" / "musique" / "musique_full_train_80.jsonl"
    task = next(t for t in load_tasks(full) if t.id == "2hop__269805_135710")
    spec, verifiers, roles = load_spec(), load_verifiers(), load_roles()
    out: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, (settings, scripts) in scenarios().items():
            config = Configuration(name=name, budgets={"r1": 1}, **settings)
            store = Store(Path(tmp) / f"{name}.db")
            _, _, model = attempt(config, task, by_role(**scripts), store, spec, verifiers, roles)
            store.close()
            out[name] = [
                {"role": role_of(m), "messages": m, "schema": json.dumps(s)}
                for m, s in zip(model.calls, model.schemas, strict=True)
            ]
    return out


def test_qa_dereact_prompts_and_schemas_are_unchanged_byte_for_byte():
    expected = json.loads(FIXTURE.read_text(encoding="utf-8"))
    got = captured()
    assert list(got) == list(expected)
    for name, calls in expected.items():
        assert len(got[name]) == len(calls), name
        for i, (mine, theirs) in enumerate(zip(got[name], calls, strict=True)):
            assert mine == theirs, (name, i, mine["role"])
    roles = {c["role"] for calls in got.values() for c in calls}
    assert roles == {"executor", "critic", "context_manager"}
    schema = next(c["schema"] for c in got["dereact"] if c["role"] == "context_manager")
    assert '"paragraph_ids"' in schema  # what question answering's context manager is asked for


if __name__ == "__main__":
    Path(sys.argv[1]).write_text(json.dumps(captured(), indent=1) + "\n", encoding="utf-8")
