"""What the core reads for any family: a reply of fenced Python as a step (the executors of code
and gsm8k), and a dataset file's JSON records with where each is (qa's formats and gsm8k)."""

from __future__ import annotations

import re

import pytest

from vreact.families import fenced_blocks, fenced_step
from vreact.inputs import DatasetError, json_records


def test_a_fenced_reply_is_a_run_a_finish_or_an_abstain():
    run = fenced_step("Let me try.\n```python\n# run\nprint(2 + 2)\n```")
    assert (run.action, run.input, run.thought) == ("run", "# run\nprint(2 + 2)\n", "Let me try.")
    finish = fenced_step("```py\nprint(1)\n```\nand then\n```python\nprint(2)\n```", thought=5)
    assert (finish.action, finish.input, finish.thought) == ("finish", "print(2)\n", "and t")
    assert fenced_step("ABSTAIN: no numbers").input == "no numbers"
    assert fenced_step('{"action": "finish", "input": "print(3)"}').input == "print(3)"
    assert fenced_step('{"action": "search", "input": "x"}') is None  # not an action of its
    assert fenced_step("The answer is 4.") is None and fenced_blocks("The answer is 4.") == []
    assert fenced_step("```python\n" + "x = 1\n" * 10, limit=12).input == "x = 1\nx = 1\n\n"  # cut, unclosed


def test_json_records_say_where_each_is(tmp_path):
    lines = tmp_path / "a.jsonl"
    lines.write_text('{"q": 1}\n\n{"q": 2}\n')
    assert list(json_records(lines)) == [(f"{lines}:1", 1, {"q": 1}), (f"{lines}:3", 3, {"q": 2})]
    array = tmp_path / "b.json"
    array.write_text('[{"q": 1}, {"q": 2}]')
    assert [w for w, _, _ in json_records(array)] == [f"{array}: record 1", f"{array}: record 2"]
    for text, said in (("", ":1: (file): the file is empty"), ('{"q": 1}\n{oops\n', ":2: (line): not JSON")):
        bad = tmp_path / "bad.jsonl"
        bad.write_text(text)
        with pytest.raises(DatasetError, match="^" + re.escape(f"{bad}{said}")):
            list(json_records(bad))
    with pytest.raises(DatasetError, match="no such dataset file"):
        list(json_records(tmp_path / "none.jsonl"))


def test_the_steps_so_far_are_one_message_each_step_cut_and_numbered():
    from vreact.families import steps_so_far

    assert steps_so_far([], fenced_step, "Next?") is None
    long = "```python\n# run\n" + "x = 1\n" * 200 + "```"
    message = steps_so_far([(long, "ran"), ("no step here", "refused")], fenced_step, "Now finish.")
    assert message is not None and message["role"] == "user"
    lines = message["content"].split("\n")
    assert lines[0] == "Your steps so far and what they returned:" and lines[-1] == "Now finish."
    first = message["content"].split("\n-> ran")[0]
    assert first.startswith(lines[0] + "\n1. run: # run\n") and len(first) < len(long)
    assert "2. (not a step)\n-> refused" in message["content"]
