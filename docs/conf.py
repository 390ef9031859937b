"""Sphinx configuration: vreact's documentation site (``make docs``).

Why Sphinx + MyST + Furo: a maintained generator with a first-class warnings-as-errors mode
(``-W --keep-going``, and ``-n``: every cross-reference must resolve), autodoc for the API
reference from the docstrings, and an offline build. MkDocs Material 9.x prints an end-of-life
notice and mkdocs 1.6 itself has had no release since 2024. Pinned exactly in pyproject.toml's
``docs`` extra: Sphinx 9.0.4 (the newest for Python 3.11: 9.1 needs 3.12, 9.2 needs 3.13),
myst-parser 5.2.0, furo 2025.12.19.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

from docutils import nodes
from pygments.lexers import JsonLexer
from sphinx import addnodes

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # autodoc imports this checkout's vreact, installed or not

project = "vreact"
author = "the vreact authors"
project_copyright = "the vreact authors"

extensions = ["myst_parser", "sphinx.ext.autodoc"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]

html_theme = "furo"
html_title = "vreact"

# Markdown: `page.md#a-heading` links resolve (anchors made for H1-H3, GitHub's slugs).
myst_heading_anchors = 3

# autodoc: members in source order, type hints kept in the signatures.
autodoc_member_order = "bysource"

# `-n` (nitpicky) resolves every type named in a signature. These are the only ones let through:
nitpick_ignore_regex = [
    # the standard library's and pydantic's types: no intersphinx inventory is fetched (the build
    # is offline). `Mapping[str` is Sphinx splitting a dataclass signature with a `<factory>`
    # default on its commas.
    ("py:class", r"(collections\.abc|pathlib|pydantic\.main)\.\w+(\[.*)?"),
    # vreact's types that a documented signature names but that are not part of the API this
    # reference documents: those of private modules (vreact.model._base, vreact.spec._models,
    # vreact.pipeline._core), then the others by name. A new one fails the build until it is
    # documented in docs/reference.md or named here (vreact.registry.T and F: type variables).
    ("py:class", r"vreact(\.[a-z]\w*)*\._\w+\.\w+"),
    (
        "py:class",
        r"vreact\.(config\.Configuration|experiment\.resolved\.(Loaded|Setup)"
        r"|experiment\.runner\.Progress|experiment\.attempt\.Stop|families\.(FaultClass|Probed|Shared|Task)"
        r"|records\.reader\.ScoreRecord|records\.store\.Store|registry\.[TF])",
    ),
]


def _repository_files(app: Any, doctree: nodes.document) -> None:
    """Links from a page to a Markdown file of the repository outside docs/
    (``[x](../benchmarks/README.md)``) become downloads of the file.

    MyST makes a link to any other existing file a download (``../experiments/chain.yaml``,
    ``../vreact/spec/_attacks.py``: the file is copied into the site), but reads a ``.md`` one as a
    page of the site, which it is not, and warns. Only links to files that exist are changed:
    a link to a missing file is left to MyST, which fails the build.
    """
    env = app.env
    srcdir = Path(env.srcdir).resolve()
    here = Path(env.doc2path(env.docname)).parent
    for node in list(doctree.findall(addnodes.pending_xref)):
        if node.get("refdomain") != "doc" or node.get("reftype") != "myst":
            continue
        target = Path(env.doc2path(node["reftarget"])).resolve()
        if target.is_relative_to(srcdir) or not target.is_file():
            continue
        download = addnodes.download_reference(
            node.rawsource,
            *node.children,
            refdomain=None,
            reftype="myst",
            reftarget=os.path.relpath(target, here),
            refdoc=node["refdoc"],
            refexplicit=node.get("refexplicit", False),
        )
        download.source, download.line = node.source, node.line
        node.replace_self(download)


_GENERIC_TITLE = re.compile(r"vreact report, run \d+")


def _evidence_titles(app: Any, doctree: nodes.document) -> None:
    """An evidence page that is ``vreact report --markdown``'s output as printed gets its path
    before its first heading (``2026-12-02-qwen1.5b-attacks/report: vreact report, run 1``), so
    that the evidence index and the navigation tell the pages apart: the report's heading is the
    same on every one."""
    docname = app.env.docname
    section = next(doctree.findall(nodes.section), None)
    if not docname.startswith("evidence/") or section is None:
        return
    title = section[0]
    if isinstance(title, nodes.title) and _GENERIC_TITLE.fullmatch(title.astext()):
        name = docname.removeprefix("evidence/")
        title.insert(0, nodes.Text(f"{name}: "))


def _skip_pydantic_config(app: Any, what: str, name: str, obj: Any, skip: bool, options: Any) -> bool | None:
    """A pydantic model's ``model_config`` is pydantic's setting, not a field: left out."""
    return True if name == "model_config" else None


def setup(app: Any) -> None:
    # datasets.md shows a JSON Lines file: each line is JSON, which Pygments' JSON lexer reads
    app.add_lexer("jsonl", JsonLexer)
    # before the environment's collectors (priority 500), which copy a download's file
    app.connect("doctree-read", _repository_files, priority=400)
    app.connect("doctree-read", _evidence_titles, priority=400)
    app.connect("autodoc-skip-member", _skip_pydantic_config)
