"""The chain (issue 24): a finish that names its hops, the searches the L3 designer issues, and
a re-sampled try after a rejection, on the Nissedal record (hop 1: Norway in paragraph 10; hop 2:
north in paragraph 6); then the same configuration against the real llama.cpp server."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from tests.conftest import FULL
from tests.helpers import attempt, bridge, by_role, criticised, hops_finish, judged, managed, plan, read
from tests.model.test_chaos import check_accounting, rows, vreact
from tests.model.test_real_server import serve
from vreact.config import Configuration
from vreact.qa.roles.designer import bridge_query, first_query
from vreact.qa.tools import corpus_of
from vreact.records import read_run
from vreact.report.html import attempt_pages, render_html

CHAIN = dict(
    guards=True,
    gates=True,
    finish="hops",
    designer={"first_search": "question", "follow_up": "bridge"},
)
NORTH = hops_finish("north", [("Norway", "10"), ("north", "6")])
WRONG = hops_finish("north", [("Tveitsund", "6"), ("north", "6")])  # 6 does not name Tveitsund
#: A try whose chain hop_supported rejects, then one whose chain it accepts.
TWO_TRIES = [read("6"), WRONG, read("6"), NORTH]


def chain(**kw) -> Configuration:
    return Configuration(name="VG+chain", **{**CHAIN, **kw})


def steps_of(store, attempt_id: int) -> list[dict]:
    return list(store.query("select * from steps where attempt_id = ? order by id", [attempt_id]))


def verdicts_of(store, attempt_id: int) -> list[dict]:
    return list(store.query("select * from verdicts where attempt_id = ? order by seq", [attempt_id]))


def test_the_designer_searches_first_and_answers_a_bridge(task_nissedal, store, spec, verifiers, roles):
    outcome, row, model = attempt(
        chain(), task_nissedal, [bridge("Norway"), read("6"), NORTH], store, spec, verifiers, roles
    )
    assert (outcome.kind, outcome.answer) == ("answer", "north")
    steps = steps_of(store, row["id"])
    assert [(s["source"], s["action"]) for s in steps] == [
        ("designer", "search"),
        ("executor", "bridge"),
        ("designer", "search"),
        ("executor", "read"),
        ("executor", "finish"),
    ]
    question = task_nissedal.question
    assert steps[0]["input"] == first_query(question) == "country nissedal located named after"
    # the entity, then the question's words the first search's best paragraph does not hold
    corpus = corpus_of(task_nissedal)
    best = corpus.search(first_query(question), k=1)[0]
    assert (
        steps[2]["input"]
        == bridge_query("Norway", question, corpus.text(best.id))
        == "Norway country nissedal"
    )
    assert steps[0]["call_id"] is None and steps[2]["call_id"] is None  # no model proposed them
    assert "[10] Tveitsund" in steps[0]["observation"]  # the usual observation, retrieved
    # the executor was shown the designer's search as a step of its try, before its first call
    assert 'search "country nissedal located named after"' in model.calls[0][-1]["content"]
    # the finish's evidence is its hops' paragraphs, and the hops are kept
    assert json.loads(steps[-1]["evidence"]) == ["10", "6"]
    assert [h["entity"] for h in json.loads(steps[-1]["hops"])] == ["Norway", "north"]
    assert json.loads(row["evidence"]) == ["10", "6"]


def test_designer_searches_count_in_the_step_budgets(task_nissedal, store, spec, verifiers, roles):
    # a step cap of 2: the designer's search and one model step, then the try ends
    config = chain(budgets={"step_cap": 2, "r1": 1})
    outcome, row, model = attempt(config, task_nissedal, [read("10"), NORTH], store, spec, verifiers, roles)
    assert len(model.calls) == 1
    assert outcome.kind == "abstain" and outcome.cause.endswith("step_cap")
    assert [s["source"] for s in steps_of(store, row["id"])] == ["designer", "executor"]


def test_the_schema_asks_for_hops_and_bridge_only_when_switched_on(
    task_nissedal, store, spec, verifiers, roles
):
    _, _, plain = attempt(
        Configuration(name="VG", guards=True, gates=True),
        task_nissedal,
        [read("10"), read("6"), NORTH],
        store,
        spec,
        verifiers,
        roles,
    )
    _, _, chained = attempt(chain(), task_nissedal, [read("6"), NORTH], store, spec, verifiers, roles)
    [plain_schema] = {json.dumps(s, sort_keys=True) for s in plain.schemas}
    [chain_schema] = {json.dumps(s, sort_keys=True) for s in chained.schemas}
    plain_schema, chain_schema = json.loads(plain_schema), json.loads(chain_schema)
    assert (
        "hops" not in plain_schema["properties"]
        and "bridge" not in plain_schema["properties"]["action"]["enum"]
    )
    # a finish names its hops (two at least: L1's min_paragraphs), and only a finish does
    tools, finish = chain_schema["anyOf"]
    assert "bridge" in tools["properties"]["action"]["enum"] and "hops" not in tools["properties"]
    assert finish["properties"]["action"] == {"const": "finish"}
    assert finish["required"] == ["thought", "action", "input", "hops"]
    assert finish["properties"]["hops"]["minItems"] == 2
    hop = finish["properties"]["hops"]["items"]["properties"]
    assert hop["entity"]["maxLength"] == 60 and hop["paragraph"]["type"] == "integer"
    # the executor is told of its hops and of the hop checks only in the chain's configuration
    shown = "\n".join(m["content"] for m in chained.calls[-1])
    assert "hops is the chain" in shown and "each hop's entity is written in its paragraph" in shown
    assert "hop" not in "\n".join(m["content"] for m in plain.calls[-1])


def test_a_hop_not_stated_in_its_paragraph_is_rejected_naming_it(
    task_nissedal, store, spec, verifiers, roles
):
    outcome, row, _ = attempt(
        chain(budgets={"r1": 2}), task_nissedal, TWO_TRIES, store, spec, verifiers, roles
    )
    [reject] = [v for v in verdicts_of(store, row["id"]) if v["decision"] == "reject"]
    assert (reject["check_name"], reject["cause"]) == ("hop_supported", "hop_unsupported")
    assert reject["detail"] == "hop 1: paragraph 6 does not state 'Tveitsund'"
    assert outcome.kind == "answer"  # the second try's chain was accepted


def test_a_rejected_try_is_resampled_at_retry_temperature(task_nissedal, store, spec, verifiers, roles):
    config = chain(retry_temperature=0.9)
    _, _, model = attempt(config, task_nissedal, TWO_TRIES, store, spec, verifiers, roles, seed=3)
    assert [s.temperature for s in model.settings] == [0.2, 0.2, 0.9, 0.9]  # try 1, then try 2
    assert {s.seed for s in model.settings} == {3}  # the attempt's seed stays


def test_the_attempt_page_shows_hops_and_designer_steps(task_nissedal, store, spec, verifiers, roles):
    attempt(chain(), task_nissedal, [bridge("Norway"), read("6"), NORTH], store, spec, verifiers, roles)
    [page] = [p for p in attempt_pages(render_html(store)).values() if "hops:" in p]
    assert page.count('<span class="chip who">designer</span>') == 2
    assert '<div class="hops small">hops: Norway <span class="muted">¶ 10</span> → north' in page
    a = read_run(store).attempts[-1]
    assert [s.source for s in a.steps][:2] == ["designer", "executor"] and a.steps[-1].hops


@pytest.mark.real_model
def test_the_chain_against_the_real_server(tmp_path: Path) -> None:
    """VG+chain from experiments/chain.yaml against SmolLM2 behind llama.cpp's server: the
    server's grammar takes the step schema with hops and bridge, every attempt is accounted
    for, each try starts with the designer's search, and each finish the model wrote names hops
    (never evidence, which the schema does not have)."""
    out = tmp_path / "run"
    with serve(tmp_path / "server.log") as url:
        args = ["run", "--experiment", "chain", "--configs", "VG+chain", "--dataset", str(FULL)]
        args += ["--limit", "2", "--model", "openai/smollm2", "--base-url", url, "--out", str(out)]
        args += ["--concurrency", "1"]
        result = vreact(*args)
    assert result.exit_code == 0, result.output
    report = check_accounting(out, ["VG+chain"], 2)
    assert report["VG+chain"]["crash"] == 0
    db = out / "vreact.db"
    steps = rows(db, "select * from steps order by id")
    tries = rows(db, "select attempt_id, component, try, min(id) as first from steps group by 1, 2, 3")
    firsts = {t["first"] for t in tries}
    assert all(s["source"] == "designer" and s["action"] == "search" for s in steps if s["id"] in firsts)
    # the grammar held on every reply the token limit did not cut (a cut one ends mid-JSON); it
    # lets a raw newline into a string, so they are read as JSON with control characters allowed
    limit = Configuration(name="c").max_tokens
    replies = rows(
        db, "select response, completion_tokens from model_calls where role = 'executor' and status = 'ok'"
    )
    parsed = [json.loads(r["response"], strict=False) for r in replies if r["completion_tokens"] < limit]
    finishes = [p for p in parsed if p["action"] == "finish"]
    assert parsed and all("evidence" not in p for p in parsed) and all("hops" in p for p in finishes)


@pytest.mark.parametrize(
    "switches",
    [
        dict(planner=True, guards=True, gates=True, judges=True),
        dict(critic=True, context_manager=True, guards=True, gates=True),
        dict(
            profile="benchmark",
            guards=True,
            gates=True,
            guard={"text_repeat": True, "duplicate_search": True},
        ),
    ],
    ids=["planner+judges", "dereact", "profile+guards"],
)
def test_the_chain_combines_with_every_other_switch(switches, task_nissedal, store, spec, verifiers, roles):
    # the planner plans the question as one subtask (1 hop suffices there); the members accept
    config = chain(retry_temperature=0.9, **switches)
    question = task_nissedal.question
    model = by_role(
        executor=itertools.cycle([bridge("Norway"), read("6"), NORTH]),
        planner=itertools.repeat(plan(("s1", question, [], "any"))),
        judge=lambda m: judged("accept"),
        critic=lambda m: criticised(),
        context_manager=lambda m: managed("success"),
    )
    outcome, row, _ = attempt(config, task_nissedal, model, store, spec, verifiers, roles)
    assert (outcome.kind, outcome.answer) == ("answer", "north"), row["error"]
    sources = [s["source"] for s in steps_of(store, row["id"])]
    assert sources[:3] == ["designer", "executor", "designer"]
