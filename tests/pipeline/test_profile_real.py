"""A context profile against the real server: a scripted executor that reads every paragraph
(step cap 20) sends its prompts to SmolLM2 behind llama.cpp's server started with n_ctx 1024.
Without a profile the prompt outgrows the context (a context_length crash); with the benchmark
profile and context_tokens 1024 every prompt fits."""

from __future__ import annotations

import pytest

from tests.helpers import attempt, finish, read
from tests.model.test_real_server import serve
from vreact.config import Configuration
from vreact.model import GenerateSettings, MockModel, get_model

pytestmark = pytest.mark.real_model


def scripted_over(server_url: str, script: list[dict]) -> MockModel:
    """Each step's prompt goes to the real server (which refuses one that does not fit), and
    the scripted step is the reply."""
    real = get_model("openai/smollm2", base_url=server_url, api_key="sk-none")
    steps = iter(script)

    def reply(messages):
        real.generate(messages, None, GenerateSettings(max_tokens=1))  # raises ContextLengthError
        return next(steps)

    return MockModel(reply)


def test_the_benchmark_profile_keeps_a_long_try_inside_a_small_context(
    task_nissedal, store, spec, verifiers, roles, tmp_path
):
    pids = [str(p.idx) for p in task_nissedal.paragraphs]
    script = [read(p) for p in pids] + [finish("north", ["10", "6"])]
    budgets = {"step_cap": 20}
    with serve(tmp_path / "server.log", n_ctx=1024) as url:
        plain = Configuration(name="N", budgets=budgets)
        outcome, row, _ = attempt(
            plain, task_nissedal, scripted_over(url, script), store, spec, verifiers, roles
        )
        assert (outcome.kind, outcome.crash_kind) == ("crash", "context_length")
        profiled = Configuration(name="N", budgets=budgets, profile="benchmark", context_tokens=1024)
        outcome, row, _ = attempt(
            profiled, task_nissedal, scripted_over(url, script), store, spec, verifiers, roles
        )
    assert outcome.kind != "crash", row["error"]
    steps = list(store.query("select * from steps where attempt_id = ?", [row["id"]]))
    assert len(steps) == len(pids)  # it read every paragraph (the step cap of 20 ended it)
