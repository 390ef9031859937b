"""HotpotQA, 2WikiMultihopQA and a user's JSON lines (issue 37): the readers on the real dev
records in tests/data/qa/, hop counts from the data, one line on bad input, the official metrics
checked against the datasets' own evaluation scripts, and the yes/no and choice answers the gates
take."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from vreact.families import family_of
from vreact.inputs import DatasetError
from vreact.qa.formats import read
from vreact.qa.gates import Artifact, choices, polar
from vreact.verify.gates import build_gate

DATA = REPO / "tests" / "data" / "qa"
HOTPOT = DATA / "hotpotqa_dev_distractor_100.jsonl"
WIKI = DATA / "2wiki_dev_100.jsonl"
SCRIPTS = {"hotpotqa": DATA / "hotpot_evaluate_v1.py", "2wiki": DATA / "2wikimultihop_evaluate_v1.1.py"}
FILES = {"hotpotqa": HOTPOT, "2wiki": WIKI}


def test_the_real_records_read_with_their_hop_counts_from_the_data_never_the_id():
    hotpot, wiki = read(HOTPOT, "hotpotqa"), read(WIKI, "2wiki")
    assert len(hotpot) == len(wiki) == 100
    assert {t.kind for t in hotpot} == {"bridge", "comparison"}
    assert {t.kind for t in wiki} == {"comparison", "inference", "compositional", "bridge_comparison"}
    for t in [*hotpot, *wiki]:
        titles = {title for title, _ in t.supporting_facts}
        assert t.hops == len(titles), t.id
        assert {t.paragraphs[int(i)].title for i in t.supporting_ids} == titles
    # HotpotQA's ids are hex: one starting with a digit is not that many hops
    fives = [t for t in hotpot if t.id.startswith("5")]
    assert fives and all(t.hops == 2 for t in fives)
    assert {t.hops for t in wiki} == {2, 4}  # bridge_comparison: two films and their directors
    # a paragraph is its sentences, each kept (the official support is sentences)
    first = hotpot[0].paragraphs[0]
    assert first.sentences and first.paragraph_text == "".join(first.sentences).strip()


def test_the_datasets_own_json_array_reads_as_its_lines_do(tmp_path):
    records = [json.loads(line) for line in HOTPOT.read_text(encoding="utf-8").splitlines()[:3]]
    array = tmp_path / "hotpot_dev.json"
    array.write_text(json.dumps(records, indent=1), encoding="utf-8")
    assert [t.id for t in read(array, "hotpotqa")] == [r["_id"] for r in records]


@pytest.mark.parametrize(
    ("fmt", "record", "said"),
    [
        (
            "hotpotqa",
            {"question": "q", "answer": "a", "context": [], "supporting_facts": []},
            ":1: _id: missing",
        ),
        (
            "hotpotqa",
            {
                "_id": "x",
                "question": "q",
                "answer": "a",
                "context": [["T", "not a list"]],
                "supporting_facts": [],
            },
            ":1: context.0: expected [title, [sentences]]",
        ),
        (
            "2wiki",
            {
                "_id": "x",
                "question": "q",
                "answer": "a",
                "context": [["T", ["s."]]],
                "supporting_facts": [["U", 0]],
            },
            ":1: supporting_facts: title 'U' is not in the context",
        ),
        ("jsonl", {"question": "q", "answer": "a", "paragraphs": [3]}, ":1: paragraphs.0: expected a string"),
        (
            "2wiki",
            {
                "_id": "x",
                "question": "q",
                "answer": "a",
                "context": [],
                "supporting_facts": [],
                "evidences": [1],
            },
            ":1: evidences.0: expected [subject, relation, object]",
        ),
        (
            "jsonl",
            {"question": "q", "answer": "a", "paragraphs": ["p"], "support": ["T"]},
            ":1: support.0: 'T'",
        ),
    ],
)
def test_a_bad_record_is_one_line_naming_file_line_and_field(tmp_path, fmt, record, said):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError) as e:
        read(path, fmt)
    assert str(e.value).startswith(str(path)) and said in str(e.value)
    assert "\n" not in str(e.value)


def test_a_users_records_read_through_the_field_map(tmp_path):
    path = tmp_path / "mine.jsonl"
    rec = {
        "qid": 7,
        "q": "Who wrote it?",
        "gold": "Ann",
        "docs": [{"name": "Book", "body": "Ann wrote the book."}, {"name": "Other", "body": "Nothing."}],
        "used": ["Book"],
    }
    path.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    fields = {"id": "qid", "question": "q", "answer": "gold", "paragraphs": "docs", "support": "used"}
    [task] = read(path, "jsonl", fields={**fields, "title": "name", "text": "body"})
    assert (task.id, task.question, task.answer, task.supporting_ids, task.hops) == (
        "7",
        "Who wrote it?",
        "Ann",
        ["0"],
        1,
    )
    with pytest.raises(DatasetError, match="'questoin' is not a part of a record"):
        read(path, "jsonl", fields={"questoin": "q"})
    with pytest.raises(DatasetError, match="a field map is for format jsonl"):
        family_of("qa").read(str(HOTPOT), "hotpotqa", fields={"question": "q"})


# --- the official metrics, against the datasets' own scripts --------------------------------------


def _predicted(fmt: str) -> tuple[list[dict], dict, list[float]]:
    """Predictions of every kind over the 100 records, by a fixed rule (gold and cited support;
    gold with half the support; a wrong answer, yes/no turned round; an abstention; the gold
    answer with its article and case changed citing one distractor), and vreact's score of each."""
    family = family_of("qa")
    records = [json.loads(line) for line in FILES[fmt].read_text(encoding="utf-8").splitlines()]
    tasks = {t.id: t for t in read(FILES[fmt], fmt)}
    pred: dict = {"answer": {}, "sp": {}, **({"evidence": {}} if fmt == "2wiki" else {})}
    scores = []
    for i, rec in enumerate(records):
        t = tasks[rec["_id"]]
        support = list(t.supporting_ids)
        other = [str(p.idx) for p in t.paragraphs if not p.is_supporting][:1]
        gold = str(t.answer)
        answer, evidence = {
            0: (gold, support),
            1: (gold, support[:1]),
            2: ({"yes": "no", "no": "yes"}.get(gold, gold + " river"), support),
            3: (None, []),
            4: ("The " + gold.lower() + ".", other),
        }[i % 5]
        scores.append(family.score(t, answer, evidence).metrics)
        if answer is not None:
            cited = [t.paragraphs[int(e)] for e in evidence]  # every sentence of each, as a user writes it
            pred["answer"][t.id] = answer
            pred["sp"][t.id] = [[p.title, k] for p in cited for k in range(len(p.sentences))]
    return records, pred, scores


def _official(fmt: str, records: list[dict], pred: dict, tmp: Path) -> dict[str, float]:
    """The dataset's own script on ``pred`` (2Wiki's with an empty alias file: "without aliases")."""
    (tmp / "gold.json").write_text(json.dumps(records), encoding="utf-8")
    (tmp / "pred.json").write_text(json.dumps(pred), encoding="utf-8")
    (tmp / "aliases.jsonl").write_text("", encoding="utf-8")
    args = [sys.executable, str(SCRIPTS[fmt]), "pred.json", "gold.json"]
    done = subprocess.run(
        args + (["aliases.jsonl"] if fmt == "2wiki" else []),
        cwd=tmp,
        capture_output=True,
        text=True,
        check=True,
    )
    out = done.stdout[done.stdout.index("{") :]
    if fmt == "2wiki":  # percentages, rounded to 2 places
        return {k: v / 100 for k, v in json.loads(out).items()}
    return ast.literal_eval(out)


@pytest.mark.parametrize("fmt", ["hotpotqa", "2wiki"])
def test_vreacts_metrics_agree_with_the_official_script(tmp_path, fmt):
    records, pred, scores = _predicted(fmt)
    official = _official(fmt, records, pred, tmp_path)
    tolerance = 0.00005 if fmt == "hotpotqa" else 0.00006  # 2Wiki rounds its percentages
    for name in ("em", "f1", "sp_em", "sp_f1", *(("joint_em", "joint_f1") if fmt == "hotpotqa" else ())):
        mine = sum(s[name] for s in scores) / len(scores)
        assert mine == pytest.approx(official[name], abs=tolerance), name
    assert 0 < official["em"] < 1 and 0 < official["sp_f1"] < 1  # every kind of prediction scored
    if fmt == "2wiki":  # no evidence predicted: vreact reports none, the script scores 0
        assert official["evi_f1"] == official["joint_f1"] == 0
        assert not any("joint_f1" in s for s in scores)


# --- answers no paragraph spells out ---------------------------------------------------------------


def _answer(question: str, answer: str, cited: dict[str, tuple[str, str]]) -> Artifact:
    return Artifact(
        "answer",
        question,
        answer=answer,
        evidence=list(cited),
        cited={k: f"{t}. {x}" for k, (t, x) in cited.items()},
        titles={k: t for k, (t, _) in cited.items()},
        retrieved=frozenset(cited),
    )


def test_a_yes_or_no_answers_a_yes_no_question_citing_both_things_compared():
    q = "Were Scott Derrickson and Ed Wood of the same nationality?"
    both = {"1": ("Scott Derrickson", "an American director."), "4": ("Ed Wood", "an American filmmaker.")}
    supported = build_gate("supported", {"yes_no": True})
    assert supported(_answer(q, "yes", both)).ok
    one = supported(_answer(q, "yes", {"1": both["1"], "7": ("Tyler Bates", "an American composer.")}))
    assert (one.ok, one.cause) == (False, "one_side")
    asked = supported(_answer("Who directed Sinister?", "yes", both))
    assert (asked.ok, asked.cause) == (False, "unsupported")  # no paragraph says yes
    # L1 without yes_no: a yes no paragraph states is unsupported, as before
    assert not build_gate("supported", {"yes_no": False})(_answer(q, "yes", both)).ok
    assert polar(q) and not polar("Which is older, A or B?")


def test_an_offered_choice_is_an_answer_not_a_restatement_and_numbers_count_in_other_words():
    q = "Who died earlier, Forouzan or Sir Robert Rankin, 1St Baronet?"
    assert choices(q)[:2] == ("Forouzan", "Sir Robert Rankin, 1St Baronet")
    restatement = build_gate("not_restatement", {})
    assert restatement(_answer(q, "Sir Robert Rankin, 1st Baronet", {})).ok
    assert not restatement(_answer(q, "who died earlier forouzan", {})).ok
    supported = build_gate("supported", {})
    born = {"3": ("Ann Lee", "Ann Lee was born on 5 May 1932 and had two sons.")}
    assert supported(_answer("When was Ann Lee born?", "May 5, 1932", born)).ok
    assert supported(_answer("How many sons did Ann Lee have?", "2", born)).ok
    assert not supported(_answer("When was Ann Lee born?", "6 June 1931", born)).ok


def test_a_run_searching_a_corpus_scores_its_citations_by_the_corpus_titles(tmp_path):
    """dataset.corpus with HotpotQA's records: an answer cites corpus ids, and its sentence-level
    support is read through the corpus (the same figures as on the record's own paragraphs); the
    official predictions are refused for such a run, saying why."""
    from vreact.qa.formats import shape
    from vreact.qa.tools import load_corpus

    tasks = read(HOTPOT, "hotpotqa", limit=3)
    corpus = tmp_path / "corpus.json"
    paragraphs = [{"title": p.title, "text": p.paragraph_text} for t in tasks for p in t.paragraphs]
    corpus.write_text(json.dumps(paragraphs), encoding="utf-8")
    placed = load_corpus(corpus).place(tasks, str(HOTPOT))
    family = family_of("qa")
    assert [t.supporting_ids for t in placed][1:] != [t.supporting_ids for t in tasks][1:]  # the corpus's
    for own, there in zip(tasks, placed, strict=True):
        mine = family.score(own, str(own.answer), list(own.supporting_ids)).metrics
        theirs = family.score(there, str(own.answer), list(there.supporting_ids)).metrics
        assert theirs == mine and mine["sp_f1"] > 0
        assert shape(there)["searched"] == "corpus" and "searched" not in shape(own)


def test_a_title_twice_in_a_record_and_ids_written_otherwise_score_as_the_script_does(tmp_path):
    """Support is read by the cited paragraph, not its title: a record whose context repeats a
    title (an attacked copy's added paragraph does) scores the paragraph cited; "00" is 0."""
    rec = {
        "_id": "dup",
        "question": "Which is it?",
        "answer": "Z",
        "context": [["X", ["s0."]], ["X", ["a.", "b.", "c."]], ["Z", ["z."]]],
        "supporting_facts": [["X", 0], ["Z", 0]],
        "type": "bridge",
    }
    (tmp_path / "d.jsonl").write_text(json.dumps(rec) + "\n", encoding="utf-8")
    [task] = read(tmp_path / "d.jsonl", "hotpotqa")
    score = family_of("qa").score(task, "Z", ["00", "2"]).metrics
    pred = {"answer": {"dup": "Z"}, "sp": {"dup": [["X", 0], ["Z", 0]]}}
    official = _official("hotpotqa", [rec], pred, tmp_path)
    assert (score["sp_em"], score["sp_f1"]) == (official["sp_em"], official["sp_f1"]) == (1.0, 1.0)


def test_a_nested_json_array_is_one_line(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    with pytest.raises(DatasetError, match="nested too deeply"):
        read(path, "hotpotqa")


def test_a_wh_question_opening_with_a_name_is_not_yes_no_and_choices_follow_a_colon():
    assert not polar("Will Smith starred in which 1996 film?")
    assert polar("Do the directors of Invisible Ghost and Africa Texas Style share a nationality?")
    q = "Which came first, of the Gordon and Irish Setters: the Manchester Terrier or the Scotch Collie?"
    assert {"the Manchester Terrier", "the Scotch Collie"} <= set(choices(q))
    molokai = "Which film was released earlier, Molokai: The Story Of Father Damien or Brahma – The Creator?"
    assert "Molokai: The Story Of Father Damien" in choices(molokai)


def test_predictions_take_no_table_flag():
    from click.testing import CliRunner

    from vreact.cli import cli

    run = REPO / "docs" / "evidence" / "2026-12-05-qwen1.5b-hotpotqa-80-99"
    for flag in ("--json", "--markdown", "--corrections"):
        done = CliRunner().invoke(cli, ["report", str(run), "--predictions", "unused", flag])
        assert done.exit_code == 2 and f"takes no {flag}" in done.output
