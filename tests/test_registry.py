"""One registry for every kind: one decorator shape, one lookup that loads what is installed on
a miss, one refusal with the closest names."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO
from vreact.families import UnknownFamily, family_of
from vreact.model import get_model
from vreact.model._registry import UnknownProvider
from vreact.pipeline import UnknownMember, member_class
from vreact.registry import REGISTRIES, Registry, UnknownName, suggestion
from vreact.tools import UnknownTool, tool_of
from vreact.verify.gates import UnknownGate, UnknownPrompt, gate_factory, prompt_of


def fresh(code: str) -> subprocess.CompletedProcess[str]:
    """``code`` run in a new interpreter: nothing installed is loaded until a name asks for it."""
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)


def test_a_verifier_set_whose_only_code_item_is_its_judge_prompt_validates():
    done = fresh(
        "from vreact.spec import VerifierSet\n"
        "v = VerifierSet.model_validate({'name': 'x', 'R3': {'judge': {'prompt': 'code_review'}}})\n"
        "print(v.R3.judge.prompt)"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "code_review"


@pytest.mark.parametrize(
    "lookup, found",
    [
        (
            "from vreact.verify.gates import gate_factory as f; print(f('examples_pass').name)",
            "examples_pass",
        ),
        ("from vreact.verify.gates import prompt_of as f; print(f('code_review').__name__)", "code_review"),
        ("from vreact.tools import tool_of as f; print(f('search').name)", "search"),
        ("from vreact.families import family_of as f; print(f('code').name)", "code"),
        ("from vreact.pipeline import member_names as f; print('critic' in f())", "True"),
    ],
)
def test_every_kind_loads_the_installed_families_on_a_miss(lookup, found):
    """A name a built-in family registers is found by its registry's lookup in a process where
    no family was loaded yet."""
    done = fresh(lookup)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == found


#: Each kind: its lookup, a misspelt name, the closest name, the error's class.
KINDS = {
    "gate": (gate_factory, "examples_pas", "examples_pass", UnknownGate),
    "judge prompt": (prompt_of, "code_reveiw", "code_review", UnknownPrompt),
    "pipeline member": (member_class, "critik", "critic", UnknownMember),
    "tool": (tool_of, "serch", "search", UnknownTool),
    "task family": (family_of, "cod", "code", UnknownFamily),
    "provider": (lambda name: get_model(f"{name}/x"), "opnai", "openai", UnknownProvider),
}


@pytest.mark.parametrize("kind", KINDS)
def test_each_kinds_unknown_name_is_the_same_one_line_error_with_the_closest(kind):
    lookup, typo, closest, error = KINDS[kind]
    with pytest.raises(error) as raised:
        lookup(typo)
    assert isinstance(raised.value, UnknownName)
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith(f"unknown {kind} {typo!r}; did you mean {closest!r}?")
    known = REGISTRIES[kind].names()
    assert message.endswith(f" (known: {', '.join(known)})") == (len(known) <= 10)


@pytest.mark.parametrize("kind", KINDS)
def test_a_name_close_to_nothing_lists_every_known_name(kind):
    lookup, _, _, error = KINDS[kind]
    with pytest.raises(error, match=r"^unknown .* 'zzzzzzzz' \(known: ") as raised:
        lookup("zzzzzzzz")
    assert all(name in str(raised.value) for name in REGISTRIES[kind].names())


def test_a_registry_takes_the_name_first_and_the_last_registration_wins():
    things: Registry[tuple[str, str]] = Registry("test thing")
    try:

        @things.register("widget", lambda name, fn: (name, fn()))
        def first() -> str:
            return "first"

        @things.register("widget", lambda name, fn: (name, fn()))
        def second() -> str:
            return "second"

        @things.register()
        def gadget() -> tuple[str, str]:
            return ("", "")

        assert things["widget"] == ("widget", "second")
        assert things.names() == ["gadget", "widget"]
        assert things.module_of("widget") == __name__
        assert "gadget" in things and "gizmo" not in things
        with pytest.raises(
            UnknownName, match=r"^unknown test thing 'widgt'; did you mean 'widget'\? \(known: "
        ):
            things["widgt"]
    finally:
        del REGISTRIES["test thing"]


def test_the_suggestion_lists_few_names_and_only_the_closest_of_many():
    few, many = ["alpha", "beta"], [f"name{i:02}" for i in range(20)]
    assert suggestion("alpah", few) == "; did you mean 'alpha'? (known: alpha, beta)"
    assert suggestion("alpah", few, listed=False) == "; did you mean 'alpha'?"
    assert suggestion("name1", many).startswith("; did you mean 'name1")
    assert "known" not in suggestion("name1", many)
    assert suggestion("qqqq", many).startswith(" (known: name00, name01")
