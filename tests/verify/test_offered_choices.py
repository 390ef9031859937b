"""The forms in which HotpotQA and 2Wiki questions offer their answers, and the wh-word of a
question's main clause: each checked over generated names and questions of its pattern, so the
gates hold on records they were not written from."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vreact.qa.gates import Artifact, choices, expected_answer_type, polar
from vreact.verify.gates import build_gate

WORDS = ["Royal", "College", "Music", "Harbour", "Queen", "Angels", "River", "North", "Saint", "Amélie"]
WORDS += ["Last", "Stone", "Garden", "Leeds", "Conservatoire", "Film", "Story", "Father", "Damien"]
#: A title: one to four capitalised words, sometimes two such runs joined by a comma or a colon
#: ("Amélie, Queen of the Angels", "Molokai: The Story Of Father Damien").
run = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)
name = st.one_of(run, st.tuples(run, st.sampled_from([", ", ": "]), run).map("".join))
#: The question before the choices: any wording of a comparison.
asks = st.sampled_from(
    [
        "Which film came out first",
        "Which film's director was born earlier",
        "Who died earlier",
        "Which was founded as a vocational school",
        "Which band has more members",
    ]
)
settings_ = settings(max_examples=150, deadline=None)

restatement = build_gate("not_restatement", {})
max_words = build_gate("max_words", {})


def answer(question: str, text: str) -> Artifact:
    return Artifact("answer", question, answer=text)


def pairs() -> st.SearchStrategy[tuple[str, str]]:
    return st.tuples(name, name).filter(lambda p: p[0] != p[1])


@settings_
@given(asks, pairs(), st.sampled_from([",", ":"]))
def test_choices_after_a_comma_or_a_colon_even_holding_commas(ask, pair, mark):
    x, y = pair
    q = f"{ask}{mark} {x} or {y}?"
    assert {x, y} <= set(choices(q))
    assert restatement(answer(q, x)).ok and restatement(answer(q, y)).ok


@settings_
@given(asks, pairs())
def test_choices_between_x_and_y(ask, pair):
    x, y = pair
    for q in (f"Between {x} and {y}, {ask[0].lower()}{ask[1:]}?", f"{ask} between {x} and {y}?"):
        assert {x, y} <= set(choices(q)), q
        assert restatement(answer(q, x)).ok and restatement(answer(q, y)).ok


@settings_
@given(asks, pairs())
def test_choices_before_a_wh_clause(ask, pair):
    x, y = pair
    if "," in x or ":" in x:  # a name that holds a comma is read from it, as after "..., X"
        return
    q = f"{x} or {y}, {ask[0].lower()}{ask[1:]}?"
    assert {x, y} <= set(choices(q))


@settings_
@given(asks, pairs(), st.sampled_from([('"', '"'), ("“", "”"), ("'", "'")]))
def test_choices_in_quotes_or_parentheses_are_read_without_them(ask, pair, quotes):
    x, y = pair
    a, b = quotes
    quoted = f"{ask}, {a}{x}{b} or {a}{y}{b}?"
    enclosed = f"{ask} ({x} or {y})?"
    for q in (quoted, enclosed):
        assert {x, y} <= set(choices(q)), q
        assert restatement(answer(q, x)).ok


@settings_
@given(
    asks,
    pairs(),
    st.lists(st.sampled_from(["because", "its", "founder", "opened", "in", "1921", "city"]), max_size=12),
)
def test_an_offered_choice_counts_as_one_word_and_never_as_the_questions(ask, pair, why):
    """An answer holding an offered choice with its explanation: the choice's words are one
    word for max_words and none of the question's for not_restatement."""
    x, y = pair
    q = f"{ask}, {x} or {y}?"
    text = " ".join([x, *why])
    art = answer(q, text)
    assert art.answer_words() == len(why) + 1
    assert max_words(art).ok == (len(why) + 1 <= 15)
    assert restatement(art).ok  # its other words are none of the question's
    assert not restatement(answer(q, f"{x} {ask}")).ok  # the choice and the question again


def test_a_long_choice_with_its_reason_is_not_too_long_but_other_long_answers_are():
    q = "Which film came out earlier, The Story Of The Royal College Of Music And Its Many Students or Dawn?"
    long = "The Story Of The Royal College Of Music And Its Many Students, released in 1951 in London"
    assert len(long.split()) > 15 and max_words(answer(q, long)).ok
    other = "a film about the students of a royal college of music released in the year 1951 in London"
    assert len(other.split()) > 15 and max_words(answer(q, other)).cause == "too_long"
    assert not restatement(answer(q, "which film came out earlier")).ok


NOUNS = ["author", "director", "singer", "company", "city", "team", "man"]
CLAUSES = ["won the prize in 1956", "founded the label", "directed the film Dawn", "wrote the novel"]
RELATIVES = ["who", "which", "that", "whose brother", "where the band", "when the war"]
ASKED = {
    "born in what year": "date",
    "born in which year": "date",
    "founded when": "date",
    "born where": "place",
    "married to whom": "person",
    "from which country": "any",
}


@settings_
@given(
    st.sampled_from(NOUNS), st.sampled_from(RELATIVES), st.sampled_from(CLAUSES), st.sampled_from(list(ASKED))
)
def test_the_wh_word_is_read_from_the_main_clause_not_a_relative_one(noun, relative, clause, asked):
    q = f"The {noun} {relative} {clause} was {asked}?"
    assert expected_answer_type(q) == ASKED[asked], q


@settings_
@given(st.sampled_from(NOUNS), st.sampled_from(RELATIVES), st.sampled_from(CLAUSES))
def test_a_question_that_opens_with_its_wh_word_keeps_it(noun, relative, clause):
    assert expected_answer_type(f"Who was the {noun} {relative} {clause}?") == "person"
    assert expected_answer_type(f"When was the {noun} {relative} {clause} born?") == "date"
    assert expected_answer_type(f"In what year was the {noun} {relative} {clause} born?") == "date"
    assert expected_answer_type(f"What is the name of the {noun} {relative} {clause}?") == "any"
    assert expected_answer_type(f"How many children had the {noun} {relative} {clause}?") == "number"


def test_a_relative_clause_wh_word_no_longer_rejects_a_year():
    q = "The author who won the prize in 1956 was born in what year?"
    assert build_gate("answer_type", {})(answer(q, "1921")).ok
    assert build_gate("answer_type", {})(answer(q, "Ann Lee")).cause == "answer_type"


TITLES = ["Who Are You", "How Long Has This Been Going On", "What Lies Beneath", "Where Eagles Dare"]


@settings_
@given(st.sampled_from(TITLES), st.sampled_from(["film", "song", "album"]), st.sampled_from(list(ASKED)))
def test_a_titles_wh_word_asks_nothing(title, work, asked):
    """A capitalised wh-word inside a question is a title's ("the song How Long Has This Been
    Going On"): it neither types the answer nor keeps a yes/no question from being one."""
    assert expected_answer_type(f"The director of the {work} {title} was {asked}?") == ASKED[asked]
    assert expected_answer_type(f"Where did the composer of the {work} {title} die?") == "place"
    assert polar(f"Are the directors of the {work}s {title} and Dawn from the same country?")


@settings_
@given(st.sampled_from(NOUNS), st.sampled_from(CLAUSES), st.sampled_from(["when", "where", "who"]))
def test_an_asking_phrase_in_place_wins_over_a_later_clauses_wh_word(noun, clause, later):
    """ "X played with what goalkeeper when he was with Y?": the "what" phrase asks; "when" opens
    a clause; a question of several sentences asks in its last."""
    q = f"Ann Lee is a {noun}, who {clause}, and played with what goalkeeper {later} she was at Leeds?"
    assert expected_answer_type(q) == "any", q
    stated = f"The {noun} {clause} in 1956. Who was the {noun}'s mother?"
    assert expected_answer_type(stated) == "person"
    assert expected_answer_type(f"The {noun} {clause} where Ann lived. It was founded when?") == "date"


@settings_
@given(st.sampled_from(NOUNS), st.sampled_from(RELATIVES), st.sampled_from(CLAUSES))
def test_a_yes_no_question_may_hold_a_relative_clause(noun, relative, clause):
    assert polar(f"Do both films have a {noun} {relative} {clause}?")
    assert not polar(f"Did the {noun} {relative} {clause} star in which film?")


@pytest.mark.parametrize(
    ("question", "text"),
    [
        ("How many awards does the player have?", "six-time"),
        ("How many seasons did the show run?", "forty-two"),
        ("What day in November is the town most congested?", "the fourth Thursday"),
        ("On what date is the fair held?", "every second Sunday"),
    ],
)
def test_numbers_in_hyphened_words_ordinals_and_weekdays_are_numbers_and_dates(question, text):
    assert build_gate("answer_type", {})(answer(question, text)).ok


@pytest.mark.parametrize(
    "form",
    [
        "Which battle, {x}, or {y}, was fought first?",  # set off by commas before the verb
        "{ask}, {x} or{y}?",  # an "or" run into the next choice, a typing slip
    ],
)
@settings_
@given(asks, pairs())
def test_choices_set_off_by_commas_or_run_into_their_or(form, ask, pair):
    x, y = pair
    if "," in y or ":" in y:
        return
    q = form.format(ask=ask, x=x, y=y)
    assert y in choices(q), q
    assert restatement(answer(q, y)).ok


@settings_
@given(
    st.integers(1, 20), st.integers(1, 20), st.sampled_from(["Earl of Desmond", "Baronet", "Duke of York"])
)
def test_an_answer_naming_a_number_the_question_does_not_is_no_restatement(a, b, title):
    q = f"Who is the paternal grandfather of James Fitzgerald, {a}th {title}?"
    other = answer(q, f"James FitzGerald, {b}th {title}")
    assert restatement(other).ok == (a != b)


def test_a_choice_with_another_number_is_still_a_restatement():
    q = "Who died earlier, Forouzan or Sir Robert Rankin, 1St Baronet?"
    assert not restatement(answer(q, "Sir Robert Rankin, 2nd Baronet")).ok
    assert restatement(answer(q, "Sir Robert Rankin, 1st Baronet")).ok


@settings_
@given(
    run,
    st.sampled_from(["campaign", "People", "Act", "treaty"]),
    st.sampled_from(["Teens", "battles", "law"]),
)
def test_an_answer_whose_head_the_question_lacks_says_something_new(words, head, other):
    q = f"What was the series of {other} about {words} and {other} called, after {words} {other}?"
    assert restatement(answer(q, f"{words} {head}")).ok
    # the same words with the question's own head are a restatement
    if len(words.split()) >= 3:
        assert not restatement(answer(q, f"{words} {other}")).ok
