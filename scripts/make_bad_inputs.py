"""Write the bad-input corpus under tests/data/bad/: one file per case, for each kind of file
vreact reads (spec, verifiers, experiment and models YAML files, MuSiQue datasets, corpora),
and tests/data/bad/manifest.json listing each case with the command that reads it and a
substring its one-line error must hold. tests/test_bad_input.py runs every case.

    python scripts/make_bad_inputs.py     # from the repository's root; rewrites the folder

In a command, ``{FILE}`` is the case's file and ``{OUT}`` a run folder that must not exist
afterwards. A case's ``env`` is set for its command (e.g. a size cap made small).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BAD = ROOT / "tests" / "data" / "bad"
REL = BAD.relative_to(ROOT)

#: A model that is never made (every case fails first); a server nobody listens on.
NO_MODEL = ["--model", "openai/none", "--base-url", "http://127.0.0.1:9", "--no-cache"]
RUN = ["run", "--dataset", "sample", "--configs", "N", "--out", "{OUT}", *NO_MODEL]
COMMANDS: dict[str, list[str]] = {
    "spec": [*RUN, "--spec", "{FILE}"],
    "verifiers": [*RUN[:4], "VG", *RUN[5:], "--verifiers", "{FILE}"],  # N runs no verifier
    "models": [*RUN, "--models", "{FILE}"],
    "experiment": ["experiment", "{FILE}", "--out", "{OUT}"],
    "dataset": ["run", "--dataset", "{FILE}", "--configs", "N", "--out", "{OUT}", *NO_MODEL],
    "corpus": [
        "experiment",
        f"{REL}/corpus_experiment.yaml",
        "--set",
        "dataset.corpus={FILE}",
        "--out",
        "{OUT}",
    ],
}

#: A valid file of each YAML kind, as lines (cases add to it or break it).
VALID = {
    "spec": [
        "kind: spec",
        "name: bad",
        "requirements:",
        "  task: Answer the question.",
        "  answer:",
        "    max_words: 15",
    ],
    "verifiers": ["kind: verifiers", "name: bad", "R1:", "  gates:", "    - parses", "    - non_empty"],
    "experiment": [
        "kind: experiment",
        "name: bad",
        "dataset:",
        "  path: sample",
        "configurations:",
        "  - name: N",
        "models:",
        "  default: openai/none",
    ],
    "models": [
        "kind: models",
        "models:",
        "  small:",
        "    model: openai/none",
        "    base_url: http://127.0.0.1:9",
        "roles:",
        "  executor: small",
    ],
}
#: Per YAML kind: a field of the wrong type, and a misspelt field (line, text to add).
WRONG_TYPE = {
    "spec": (
        ["kind: spec", "name: bad", "requirements:", "  task: t", "  answer:", "    max_words: many"],
        "max_words",
    ),
    "verifiers": (["kind: verifiers", "name: bad", "R1:", "  gates: 3"], "R1.gates"),
    "experiment": ([*VALID["experiment"], "attempts: three"], "attempts"),
    "models": (["kind: models", "models:", "  small:", "    model: [openai, none]"], "models.small.model"),
}
UNKNOWN = {
    "spec": ["kind: spec", "name: bad", "requirements:", "  task: t", "  answr: {max_words: 3}"],
    "verifiers": [
        "kind: verifiers",
        "name: bad",
        "R1:",
        "  gates: [parses]",
        "  judgee: {min_confidence: 0.7}",
    ],
    "experiment": [*VALID["experiment"][:6], "    planer: true", *VALID["experiment"][6:]],
    "models": ["kind: models", "models:", "  small:", "    model: openai/none", "    base_ulr: http://x"],
}

#: Per YAML kind: the misspelt key in UNKNOWN, the field path its error names, the field meant.
TYPO = {
    "spec": ("answr", "requirements.answr", "answer"),
    "verifiers": ("judgee", "R1.judgee", "judge"),
    "experiment": ("planer", "configurations.0.planer", "planner"),
    "models": ("base_ulr", "models.small.base_ulr", "base_url"),
}


def alias_bomb(head: list[str]) -> str:
    """Nine levels of nine aliases (9**9 values once expanded) in a few hundred bytes."""
    lines = [*head, "x0: &a0 [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 10):
        lines.append(f"x{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]")
    return "\n".join(lines) + "\n"


def yaml_cases(kind: str) -> list[dict[str, Any]]:
    valid = "\n".join(VALID[kind]) + "\n"
    wrong, wrong_field = WRONG_TYPE[kind]
    unknown = "\n".join(UNKNOWN[kind]) + "\n"
    typo = next(i for i, line in enumerate(UNKNOWN[kind], 1) if TYPO[kind][0] in line)
    big = valid + "".join(f"# padding comment line {i:05d} to pass the size cap\n" for i in range(100))
    return [
        case("empty", "an empty file", b"", "the file is empty"),
        case("comments_only", "only comments", b"# nothing here\n\n# at all\n", "holds no fields"),
        case("not_utf8", "a Latin-1 byte", (valid + "description: caf\xe9\n").encode("latin-1"), "not UTF-8"),
        case("utf16", "UTF-16 text (its BOM is FF FE)", valid.encode("utf-16"), ":1: (file): not UTF-8"),
        case(
            "bom_then_unknown_field",
            "a UTF-8 BOM is accepted: the error is the unknown field's, on its own line",
            b"\xef\xbb\xbf" + unknown.encode(),
            f":{typo}: {TYPO[kind][1]}: unknown field; did you mean {TYPO[kind][2]!r}?",
        ),
        case("truncated", "a flow list never closed", (valid + "extra: [a, b\n").encode(), "(yaml)"),
        case("wrong_type", "a field of the wrong type", ("\n".join(wrong) + "\n").encode(), wrong_field),
        case(
            "unknown_field",
            "a misspelt field",
            unknown.encode(),
            f"unknown field; did you mean {TYPO[kind][2]!r}?",
        ),
        case("not_a_mapping", "a list where the fields go", b"- kind\n- name\n", "expected a mapping"),
        case(
            "repeated_key", "a key given twice", (valid + VALID[kind][1] + "\n").encode(), "the key repeats"
        ),
        case("nul_byte", "a NUL byte", (valid + "name2: a\0b\n").encode(), "NUL byte"),
        case(
            "deep_nesting",
            "lists nested 1,000 deep",
            (valid + "x: " + "[" * 1_000 + "]" * 1_000 + "\n").encode(),
            "nest",
        ),
        case("alias_bomb", "nine levels of nine aliases", alias_bomb(VALID[kind]).encode(), "alias"),
        case(
            "too_big",
            "over the size cap (made 4 KB by VREACT_MAX_YAML_MB: the shipped files read are smaller)",
            big.encode(),
            "too big",
            env={"VREACT_MAX_YAML_MB": "0.004"},
        ),
        case("directory", "a directory where the file goes", None, "a directory", special="dir"),
        case("symlink_loop", "a symbolic link to itself", None, "symbolic links", special="loop"),
    ]


def record(**over: Any) -> dict[str, Any]:
    """A small valid MuSiQue record (two paragraphs, one hop)."""
    base: dict[str, Any] = {
        "id": "2hop__1_2",
        "paragraphs": [
            {"idx": 0, "title": "A", "paragraph_text": "A is in B.", "is_supporting": True},
            {"idx": 1, "title": "C", "paragraph_text": "C is elsewhere.", "is_supporting": False},
        ],
        "question": "Where is A?",
        "question_decomposition": [
            {"id": 1, "question": "Where is A?", "answer": "B", "paragraph_support_idx": 0}
        ],
        "answer": "B",
        "answer_aliases": [],
        "answerable": True,
    }
    return {**base, **over}


def lines(*records: Any) -> bytes:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records).encode()


def dataset_cases() -> list[dict[str, Any]]:
    ok = record()
    typo = {k if k != "answerable" else "answerble": v for k, v in ok.items()}
    paragraphs = [dict(p) for p in ok["paragraphs"]]
    paragraphs[1]["is_suporting"] = paragraphs[1].pop("is_supporting")
    twice = [dict(p) for p in ok["paragraphs"]]
    twice[1]["idx"] = 0
    big = lines(*[record(id=f"2hop__{i}_2") for i in range(4)])
    return [
        case(
            "utf16",
            "UTF-16 text (its BOM is FF FE)",
            lines(ok).decode().encode("utf-16"),
            ":1: (file): not UTF-8",
        ),
        case("empty", "an empty file", b"", "the file is empty"),
        case("blank_lines", "only blank lines", b"\n  \n\n", "the file is empty"),
        case(
            "not_utf8",
            "a Latin-1 byte on line 2",
            lines(ok) + '{"id": "caf\xe9"}\n'.encode("latin-1"),
            ":2: (file): not UTF-8",
        ),
        case(
            "bom_then_bad_line",
            "a UTF-8 BOM is accepted: line 1 loads, line 2 is refused",
            b"\xef\xbb\xbf" + lines(ok, record(id="2hop__3_4", question=3)),
            ":2: question:",
        ),
        case(
            "truncated_json",
            "a record cut off mid-line",
            lines(ok, json.dumps(record(id="x"))[:60]),
            ":2: (line): not JSON",
        ),
        case(
            "wrong_type",
            "a question that is a number",
            lines(record(question=3)),
            "question: Input should be a valid string",
        ),
        case(
            "paragraphs_not_list",
            "paragraphs that are a string",
            lines(record(paragraphs="A is in B.")),
            "paragraphs:",
        ),
        case(
            "missing_field",
            "no question",
            lines({k: v for k, v in ok.items() if k != "question"}),
            "question: Field required",
        ),
        case("not_an_object", "a line that is a JSON list", lines([1, 2, 3]), "a record is a JSON object"),
        case(
            "json_array",
            "a JSON array of records, not JSON lines",
            json.dumps([ok], indent=1).encode(),
            "not a JSON array",
        ),
        case(
            "unknown_field",
            "answerble for answerable",
            lines(typo),
            "'answerble'; did you mean 'answerable'?",
        ),
        case(
            "unknown_paragraph_field",
            "is_suporting in a paragraph",
            lines(record(paragraphs=paragraphs)),
            "paragraphs.1.is_suporting: unknown field 'is_suporting'; did you mean 'is_supporting'?",
        ),
        case(
            "repeated_idx",
            "two paragraphs with idx 0",
            lines(record(paragraphs=twice)),
            "paragraphs.1.idx: idx 0 repeats",
        ),
        case(
            "repeated_id",
            "one id twice, both answerable (not a MuSiQue-Full pair)",
            lines(ok, ok),
            ":2: id: '2hop__1_2' repeats and is not an answerable/unanswerable pair",
        ),
        case(
            "repeated_id_thrice",
            "one id three times (a pair and one more)",
            lines(ok, record(answerable=False), ok),
            "repeats and is not an answerable/unanswerable pair",
        ),
        case("nul_byte", "a NUL byte", lines(ok) + b'{"id": "a\x00b"}\n', ":2: (file): a NUL byte"),
        case(
            "deep_nesting",
            "JSON nested 5,000 deep",
            lines('{"id": ' + "[" * 5_000 + "]" * 5_000 + "}"),
            "nested too deeply",
        ),
        case(
            "too_big",
            "over the size cap (made 1 KB by VREACT_MAX_FILE_MB)",
            big,
            "too big",
            env={"VREACT_MAX_FILE_MB": "0.001"},
        ),
        case("directory", "a directory where the file goes", None, "a directory", special="dir"),
        case("symlink_loop", "a symbolic link to itself", None, "symbolic links", special="loop"),
    ]


def corpus_cases() -> list[dict[str, Any]]:
    ok = {"title": "A", "text": "A is in B."}
    return [
        case(
            "utf16",
            "UTF-16 text (its BOM is FF FE)",
            json.dumps([ok]).encode("utf-16"),
            ":1: (file): not UTF-8",
        ),
        case("empty", "an empty file", b"", "the file is empty"),
        case(
            "not_utf8",
            "a Latin-1 byte",
            '[{"title": "caf\xe9", "text": "x"}]\n'.encode("latin-1"),
            "not UTF-8",
        ),
        case(
            "bom_then_bad_item",
            "a UTF-8 BOM is accepted: item 1 is refused",
            b"\xef\xbb\xbf" + json.dumps([ok, {"title": 3, "text": "x"}], indent=1).encode(),
            "[1].title: not a string",
        ),
        case("truncated_array", "a JSON array cut off", json.dumps([ok, ok])[:-10].encode(), "not JSON"),
        case("truncated_line", "a JSON line cut off", lines(ok, json.dumps(ok)[:15]), ":2: (line): not JSON"),
        case(
            "wrong_type",
            "a text that is a list",
            lines(ok, {"title": "C", "text": ["x"]}),
            "[1].text: not a string (list)",
        ),
        case("missing_field", "an item without text", lines({"title": "C"}), "[0].text: missing"),
        case(
            "not_an_object",
            "an item that is a string",
            json.dumps(["A is in B."]).encode(),
            "a paragraph is an object",
        ),
        case(
            "one_object",
            "one JSON object, not a list of them",
            json.dumps({"A": "B"}, indent=1).encode(),
            "not one dict",
        ),
        case("empty_array", "no paragraph", b"[]\n", "the corpus has no paragraph"),
        case(
            "nul_byte",
            "a NUL byte",
            lines(ok) + b'{"title": "a\x00", "text": "b"}\n',
            ":2: (file): a NUL byte",
        ),
        case(
            "deep_nesting",
            "JSON nested 5,000 deep",
            ("[" * 5_000 + "]" * 5_000 + "\n").encode(),
            "nested too deeply",
        ),
        case(
            "too_big",
            "over the size cap (made 1 KB by VREACT_MAX_FILE_MB)",
            lines(*[ok] * 40),
            "too big",
            env={"VREACT_MAX_FILE_MB": "0.001"},
        ),
        case("directory", "a directory where the file goes", None, "a directory", special="dir"),
        case("symlink_loop", "a symbolic link to itself", None, "symbolic links", special="loop"),
    ]


def case(
    name: str,
    covers: str,
    content: bytes | None,
    expect: str,
    *,
    env: dict[str, str] | None = None,
    special: str | None = None,
    argv: list[str] | None = None,
) -> dict[str, Any]:
    return {
        "argv": argv,
        "case": name,
        "covers": covers,
        "content": content,
        "expect": expect,
        "env": env or {},
        "special": special,
    }


EXT = {
    "spec": "yaml",
    "verifiers": "yaml",
    "experiment": "yaml",
    "models": "yaml",
    "dataset": "jsonl",
    "corpus": "json",
}


def main() -> None:
    if BAD.exists():
        shutil.rmtree(BAD)
    BAD.mkdir(parents=True)
    (BAD / "corpus_dataset.jsonl").write_bytes(lines(record()))
    (BAD / "corpus_experiment.yaml").write_text(
        "# The experiment every corpus case runs with: --set dataset.corpus=CASE\n"
        f"kind: experiment\nname: bad-corpus\ndataset:\n  path: {REL}/corpus_dataset.jsonl\n"
        "configurations:\n  - {name: N}\n"
        "models:\n  default: openai/none\nbase_url: http://127.0.0.1:9\ncache: false\n"
    )
    manifest = []
    kinds = {k: yaml_cases(k) for k in VALID} | {"dataset": dataset_cases(), "corpus": corpus_cases()}
    for kind, cases in kinds.items():
        folder = BAD / kind
        folder.mkdir()
        for c in cases:
            path = folder / f"{c['case']}.{EXT[kind]}"
            if c["special"] == "dir":
                path.mkdir()
                (path / ".keep").write_text("a directory where a file is expected\n")
            elif c["special"] == "loop":
                os.symlink(path.name, path)
            else:
                path.write_bytes(c["content"])
            rel = str(path.relative_to(ROOT))
            manifest.append(
                {
                    "kind": kind,
                    "case": c["case"],
                    "file": rel,
                    "covers": c["covers"],
                    "argv": [a.replace("{FILE}", rel) for a in c["argv"] or COMMANDS[kind]],
                    "env": c["env"],
                    "expect": c["expect"],
                }
            )
    (BAD / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"wrote {len(manifest)} cases under {REL}")


if __name__ == "__main__":
    main()
