"""Prefix-stable prompts (issue 14, target 4): within a try, each role's call k+1 starts with
call k's prompt minus only its volatile tail (the DeReAct State, the closing question, a re-ask
or a proposal), so a server's prompt cache reuses everything before it. Checked on the
messages as a chat template would serialise them, over a scripted mock per role."""

from __future__ import annotations

import re
from itertools import pairwise

import pytest

from tests.helpers import (
    attempt,
    bridge,
    by_role,
    criticised,
    finish,
    hops_finish,
    managed,
    read,
    role_of,
    search,
    support_ids,
)
from vreact.config import Configuration
from vreact.qa.dataset import Task
from vreact.qa.roles.executor import _NEXT, STATE_HEADING, next_question

VG = Configuration(name="VG", guards=True, gates=True, budgets={"r1": 1})
VG_DUP = Configuration(
    name="VG-dup", guards=True, gates=True, guard={"duplicate_search": True}, budgets={"r1": 1}
)
DEREACT = Configuration(name="dereact", critic=True, context_manager=True, budgets={"r1": 1})
CRITIC = Configuration(name="ablation_b", critic=True, budgets={"r1": 1})
CM = Configuration(name="ablation_a", context_manager=True, budgets={"r1": 1})
CHAIN = Configuration(
    name="VG+chain",
    guards=True,
    gates=True,
    finish="hops",
    designer={"first_search": "question", "follow_up": "bridge"},
    budgets={"r1": 1},
)

#: Where each role's volatile tail starts (the earliest of these in the serialised prompt).
TAILS = {
    "executor": ("Earlier tries were rejected:", STATE_HEADING, _NEXT, next_question(True, True)),
    "critic": ("Verified facts:", "Steps so far:\n(none)", "Proposed action:"),
    "context_manager": ("Verified facts so far:",),
}
STEP_LINE = re.compile(r"\n\d+\. ")


def serialised(messages: list[dict[str, str]]) -> tuple[str, list[int]]:
    """ChatML-like text (what a llama.cpp server tokenises) and each message's start offset."""
    text, starts = "", []
    for m in messages:
        starts.append(len(text))
        text += f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n"
    return text, starts


def tail_start(role: str, messages: list[dict[str, str]]) -> int:
    """Where the volatile tail of a prompt starts: a role's marker, or (executor) any message
    after the history (a rollback's re-ask, final-answer recovery)."""
    text, starts = serialised(messages)
    last_fixed, after = 0, 0
    if role == "executor":  # its markers count in its last fixed message (the history, if any)
        history = [i for i, m in enumerate(messages) if m["content"].startswith("Your steps so far")]
        last_fixed = history[-1] if history else 1
        after = starts[last_fixed]
    cut = [i for i in (text.find(m, after) for m in TAILS[role]) if i >= 0]
    cut += starts[last_fixed + 1 :] if role == "executor" else []
    at = min(cut, default=len(text))
    return at - 1 if text[at - 1 : at] == "\n" else at  # the line break before it goes with it


def check_prefix_stable(calls: list[list[dict[str, str]]], role: str) -> int:
    """Each consecutive pair of ``role``'s calls: call k minus its tail is a prefix of call k+1,
    and no step of the history is in the tail (it belongs to the reused prefix)."""
    mine = [c for c in calls if role_of(c) == role]
    for k, (a, b) in enumerate(pairwise(mine)):
        text_a, _ = serialised(a)
        text_b, _ = serialised(b)
        cut = tail_start(role, a)
        assert text_b.startswith(text_a[:cut]), (role, k, text_a[:cut], text_b)
        assert not STEP_LINE.search(text_a[cut:]), (role, k, text_a[cut:])
    return len(mine)


def solved(task: Task) -> list[dict]:
    pids = support_ids(task)
    return [*(read(p) for p in pids), finish(task.answer, pids)]


def test_vg_executor_prompts_grow_by_appending(task_nissedal, store, spec, verifiers, roles):
    # a repeated call gets the repetition guard's hint on its observation
    steps = [search("Nissedal"), search("Nissedal"), search("Nissedal"), *solved(task_nissedal)]
    _, _, model = attempt(VG, task_nissedal, steps, store, spec, verifiers, roles)
    assert any("same call was made" in c[-1]["content"] for c in model.calls)
    assert check_prefix_stable(model.calls, "executor") == len(steps)


def test_a_rollback_reask_is_the_tail(task_nissedal, store, spec, verifiers, roles):
    steps = [search("Nissedal"), search("nissedal"), *solved(task_nissedal)]
    _, _, model = attempt(VG_DUP, task_nissedal, steps, store, spec, verifiers, roles)
    assert any("You already searched" in c[-1]["content"] for c in model.calls)
    assert check_prefix_stable(model.calls, "executor") == len(steps)


@pytest.mark.parametrize("config", [DEREACT, CRITIC, CM], ids=lambda c: c.name)
def test_dereact_roles_are_prefix_stable_while_the_state_changes(
    config, task_nissedal, store, spec, verifiers, roles
):
    pids = support_ids(task_nissedal)
    steps = [search("Nissedal"), search("Nissedal municipality"), *solved(task_nissedal)]
    facts = [[], [("Nissedal is in Norway", [pids[0]])], [("Nissedal is in Norway", [pids[0]])]]
    facts += [[("Nissedal is in Norway", [pids[0]]), ("Norway means north", [pids[-1]])]] * 3
    states = [managed("continue", f) for f in facts[: len(steps) - 1]] + [managed("success", facts[-1])]
    scripts = {"executor": steps}
    if config.critic:  # one reject (a spent step: its feedback is the next observation)
        scripts["executor"] = [steps[0], *steps]
        scripts["critic"] = [criticised(), criticised("reject", 0.9, "use other words"), *[criticised()] * 9]
    if config.context_manager:
        scripts["context_manager"] = states
    _, _, model = attempt(config, task_nissedal, by_role(**scripts), store, spec, verifiers, roles)
    assert check_prefix_stable(model.calls, "executor") == len(scripts["executor"])
    if config.critic:
        assert check_prefix_stable(model.calls, "critic") == len(scripts["executor"])
    if config.context_manager:
        assert check_prefix_stable(model.calls, "context_manager") >= len(steps) - 1


def test_designer_steps_and_hops_keep_the_prefix(task_nissedal, store, spec, verifiers, roles):
    # the designer's first search and its answer to a bridge are steps of the history like the
    # executor's own; the hops finish's closing question is the tail
    first, last = support_ids(task_nissedal)[0], support_ids(task_nissedal)[-1]
    steps = [bridge("Norway"), read(last), hops_finish("north", [("Norway", first), ("north", last)])]
    _, row, model = attempt(CHAIN, task_nissedal, steps, store, spec, verifiers, roles)
    sources = [r["source"] for r in store.query("select source from steps where attempt_id = ?", [row["id"]])]
    assert sources == ["designer", "executor", "designer", "executor", "executor"]
    assert row["outcome"] == "answer"
    assert next_question(True, True) in model.calls[-1][-1]["content"]
    assert check_prefix_stable(model.calls, "executor") == len(steps)
