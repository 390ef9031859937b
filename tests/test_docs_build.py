"""The documentation site builds as ``make docs`` builds it (Sphinx, warnings as errors, every
cross-reference resolved), and a broken link fails that build."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("sphinx")
pytest.importorskip("myst_parser")
pytest.importorskip("furo")

DOCS = Path(__file__).resolve().parent.parent / "docs"


def build(src: Path, out: Path, builder: str = "html") -> subprocess.CompletedProcess[str]:
    """``make docs``'s command, into ``out``, without colour (CI may force it on)."""
    command = ["-W", "--keep-going", "-n", "-q", "--no-color", "-b", builder, str(src), str(out)]
    return subprocess.run(
        [sys.executable, "-m", "sphinx", *command],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_site_builds_with_its_api_reference(tmp_path: Path) -> None:
    built = build(DOCS, tmp_path)
    assert built.returncode == 0, built.stderr
    assert (tmp_path / "index.html").is_file()
    reference = (tmp_path / "reference.html").read_text(encoding="utf-8")
    assert 'id="vreact.run_experiment"' in reference  # autodoc read the docstrings
    assert 'id="vreact.records.AttemptRecord"' in reference
    # an evidence page of vreact report's output is told apart by its folder in the index
    evidence = (tmp_path / "evidence" / "index.html").read_text(encoding="utf-8")
    assert "2026-12-02-qwen1.5b-attacks/report: vreact report, run 1" in evidence


def small_site(root: Path, *links: str) -> Path:
    """docs/conf.py with a home page and one page holding ``links``, in ``root/docs``, beside a
    repository file ``root/NOTES.md`` (outside the source folder, as the README is)."""
    src = root / "docs"
    src.mkdir()
    shutil.copy(DOCS / "conf.py", src / "conf.py")
    (root / "NOTES.md").write_text("# Notes\n")
    (src / "index.md").write_text("# Home\n\n```{toctree}\npage\n```\n")
    listed = "".join(f"- [there]({link})\n" for link in links)
    (src / "page.md").write_text(f"# Page\n\n## A section\n\n{listed}")
    return src


def test_links_that_resolve_pass(tmp_path: Path) -> None:
    """A page, a heading's anchor (its own page's or another's), a Markdown or other file of the
    repository outside docs/ (made a download), a web address."""
    links = (
        "index.md",
        "page.md#a-section",
        "#a-section",
        "../NOTES.md",
        "../docs/conf.py",
        "https://example.org/",
    )
    built = build(small_site(tmp_path, *links), tmp_path / "html")
    assert built.returncode == 0, built.stderr
    page = (tmp_path / "html" / "page.html").read_text(encoding="utf-8")
    assert page.count('class="reference download internal"') == 2  # NOTES.md and conf.py


def test_broken_links_fail_the_build(tmp_path: Path) -> None:
    broken = {  # each link, and what the build says of it
        "missing.md": "target not found: 'missing.md'",
        "index.md#no-such-section": "local id not found in doc 'index': 'no-such-section'",
        "#nope": "target not found: 'nope'",
        "../MISSING.md": "target not found: '../MISSING.md'",
        "../missing.py": "target not found: '../missing.py'",
    }
    built = build(small_site(tmp_path, *broken), tmp_path / "html")
    assert built.returncode != 0
    warnings = [line for line in built.stderr.splitlines() if "WARNING" in line]
    assert len(warnings) == len(broken), built.stderr  # --keep-going: each is reported
    for warning, said in zip(warnings, broken.values(), strict=True):
        assert warning.startswith(f"{tmp_path / 'docs' / 'page.md'}:") and said in warning, warning


def test_a_broken_link_in_the_real_pages_fails_the_build(tmp_path: Path) -> None:
    """The real site, copied beside links to the rest of the repository (pages link to its files),
    with one link to a page that does not exist planted in it. Built by the dummy builder, which
    reads and resolves every page as the HTML one does but writes nothing (half the time)."""
    for entry in DOCS.parent.iterdir():
        if entry.name not in ("docs", ".git", ".venv"):
            (tmp_path / entry.name).symlink_to(entry)
    src = tmp_path / "docs"
    shutil.copytree(DOCS, src, ignore=shutil.ignore_patterns("_build", "*.db"))
    page = src / "concepts.md"
    page.write_text(
        page.read_text(encoding="utf-8") + "\nSee [nothing](no-such-page.md).\n", encoding="utf-8"
    )
    built = build(src, tmp_path / "out", "dummy")
    assert built.returncode != 0
    warnings = [line for line in built.stderr.splitlines() if "WARNING" in line]
    assert len(warnings) == 1 and "concepts.md" in warnings[0] and "no-such-page" in warnings[0], built.stderr
