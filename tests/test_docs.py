"""The design is in the repository: docs/design.md exists with every part of it, the README links
it, and no tracked text points at a file outside the repository or at one that does not exist."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO

#: What points outside: the design page kept beside the repository, or the folder holding it.
OUTSIDE = re.compile(r"\bDESIGN\.md\b|\.\./shared\b")
#: A path of the repository named in its text, e.g. vreact/records/store.py or tests/records/test_store.py.
REPO_PATH = re.compile(
    r"(?<![\w./-])((?:benchmarks|docs|experiments|memory|schemas|scripts|specs|tests|verifiers|vreact)"
    r"/[\w./-]*\w\.(?:css|js|json|md|py|sh|yaml))(?![\w/*])"
)
#: A link whose target is a file, by the kind of file it is in: a Markdown link, a YAML file's schema.
LINKS = {".md": re.compile(r"\]\(([^)#\s]+)[^)]*\)"), ".yaml": re.compile(r"\$schema=(\S+)")}
DESIGN_PARTS = (
    "## The V",
    "## The controller",
    "### The state machine",
    "### The routing table",
    "## The step pipeline",
    "## The records",
    "## The per-role context schema",
    "## Settings belong to the component that reads them",
    "## Layers",
    "## Where each part lives",
)


def tracked_text() -> dict[str, str]:
    """Every text file git tracks (or would: new files not ignored), but the data the suite reads."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    out = {}
    for name in listed:
        path = REPO / name
        if name.startswith("tests/data/") or not path.is_file():
            continue
        try:
            out[name] = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # an image
    return out


@pytest.fixture(scope="module")
def texts() -> dict[str, str]:
    return tracked_text()


def test_the_design_is_in_the_repository_and_the_readme_links_it(texts):
    design = texts["docs/design.md"]
    assert [part for part in DESIGN_PARTS if f"\n{part}\n" not in design] == []
    assert "](docs/design.md)" in texts["README.md"]


def test_no_tracked_text_points_outside_the_repository(texts):
    found = {
        (name, text[: m.start()].count("\n") + 1)
        for name, text in texts.items()
        for m in OUTSIDE.finditer(text)
    }
    assert sorted(found) == []


def links(name: str, text: str) -> list[str]:
    """The files ``text`` links to (not URLs), as written."""
    pattern = LINKS.get(Path(name).suffix)
    return [t for t in pattern.findall(text) if not re.match(r"[a-z]+:", t)] if pattern else []


def inside(name: str, target: str) -> bool:
    """Whether a link in file ``name`` names a file of the repository."""
    path = ((REPO / name).parent / target).resolve()
    return path.is_relative_to(REPO) and path.exists()


def test_every_link_names_a_file_inside_the_repository(texts):
    broken = [(name, t) for name, text in texts.items() for t in links(name, text) if not inside(name, t)]
    assert broken == []


def test_every_repository_path_named_in_the_text_exists(texts):
    """e.g. a page naming the test that checks it, or a module since moved."""
    named = {(name, p) for name, text in texts.items() for p in REPO_PATH.findall(text)}
    assert sorted((name, p) for name, p in named if not (REPO / p).exists()) == []


def test_the_checks_find_what_they_look_for():
    """Planted pointers are found (written in pieces, so this file holds none): the outside
    page and its folder, a link out of the repository, a test that is not there."""
    page, folder, gone = "DESIGN" + ".md", ".." + "/shared/seeds/", "tests/" + "test_memory.py"
    assert len(OUTSIDE.findall(f"see {page}, and {folder}")) == 2
    assert not OUTSIDE.search("see docs/design.md")
    [target] = links("README.md", f"[the picture]({folder}picture.md)")
    assert not inside("README.md", target) and inside("specs/musique.yaml", "../schemas/spec.schema.json")
    assert REPO_PATH.findall(f"`{gone}` checks this page, and docs/design.md.") == [gone, "docs/design.md"]
    assert not (REPO / gone).exists()


#: A make target a text tells its reader to run: in backticks (`make docs`), a command line
#: (``make demo  # ...``), or a code comment's parenthesis ("(make test does it)").
MAKE = re.compile(r"(?:`|\()make ([a-z][\w-]*)|^\s*make ([a-z][\w-]*)(?=\s*(?:#|$|[A-Z]+=))", re.M)


def make_targets() -> set[str]:
    return set(re.findall(r"^([A-Za-z][\w-]*):", (REPO / "Makefile").read_text(), re.M))


def test_every_make_target_the_text_names_is_in_the_makefile(texts):
    """e.g. a page telling its reader to ``make install``, a target that was never there."""
    named = {
        (name, "".join(t)) for name, text in texts.items() if name.endswith(".md") for t in MAKE.findall(text)
    }
    assert sorted((name, t) for name, t in named if t not in make_targets()) == []
    assert {"demo", "test", "docs"} <= {t for _, t in named}
    assert MAKE.findall("apt-get install bubblewrap  # the sandbox (make install does it)") == [
        ("install", "")
    ]
    assert MAKE.findall("make and fix mistakes\nmake demo   # the demo") == [("", "demo")]
