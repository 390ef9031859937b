"""The qa family's own settings: its L1 answer requirements (a spec's ``requirements.answer``), its
dataset settings (an experiment's ``dataset``) and its step settings (a configuration's keys, and
its ``guard`` group's duplicate search), each a model the family declares
(``vreact.families.TaskFamily``) and the core validates where a file names them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from vreact.config import IdleSetting, SettingError, setting
from vreact.families import FINALS, Settings
from vreact.qa.attack_settings import Attack, unique_names


class AnswerRequirements(Settings):
    """What an acceptable answer is (L1). The gates (R1's and R3's) take their conditions from here by
    name (vreact.verify.gates.build_gate), and the designer's contract says them. Its fields keep
    their order (``abstention_allowed``, every family's, among them): L1 is shown to the roles as
    they dump."""

    max_words: int = Field(15, ge=1, description="longest acceptable answer, in words")
    type_from_wh_word: bool = Field(
        True, description="the answer type must fit the wh-word (R3's answer_type and the contract)"
    )
    cite_evidence: bool = Field(
        True,
        description="the answer must cite retrieved paragraphs (false: evidence_retrieved, supported "
        "and multi_hop accept an uncited answer, and the contract asks for no citation)",
    )
    abstention_allowed: bool = Field(True, description="the agent may decline to answer")
    min_paragraphs: int = Field(
        1, ge=1, description="fewest distinct paragraphs the final answer must cite (2 for multi-hop)"
    )
    yes_no: bool = Field(
        False,
        exclude_if=lambda v: not v,  # off, L1 reads as it did before it existed (prompts, records)
        description="a yes/no question may be answered yes or no (HotpotQA's and 2Wiki's comparisons),"
        " citing the paragraphs of both things it compares (R1's supported); false: such an answer is"
        " held to a paragraph stating it, as any other",
    )

    @field_validator("min_paragraphs")
    @classmethod
    def _cited(cls, n: int, info: ValidationInfo) -> int:
        """More than one paragraph can only be counted among cited ones."""
        if n > 1 and info.data.get("cite_evidence") is False:
            raise ValueError(f"min_paragraphs {n} counts cited paragraphs: it needs cite_evidence: true")
        return n


class QADataset(Settings):
    """Which of a file's questions a run takes beyond the core's filter, and what it searches:
    applied before ``task_ids`` and ``limit``."""

    hops: list[int] | None = Field(None, description="keep only these hop counts, e.g. [2, 3]")
    answerable: bool | None = Field(None, description="keep only answerable (true) or unanswerable (false)")
    corpus: str | None = Field(
        None,
        description="a corpus (JSON array or JSON lines of {title, text}; ids are positions): search"
        " runs over it instead of each task's own paragraphs (docs/corpus.md)",
    )
    fields: dict[str, str] | None = Field(
        None,
        description="format jsonl: which field of a record holds each part (id, question, answer,"
        " aliases, paragraphs, support, title, text), those that differ from the part's name"
        " (docs/datasets.md)",
    )
    attacks: list[Attack] = Field(
        default_factory=list,
        description="attacked copies of the tasks, beside them (ids <id>~<attack name>): poison"
        " (false statements) or inject (instructions) paragraphs added to each (README, Attacks)",
    )

    @field_validator("attacks")
    @classmethod
    def _named(cls, attacks: list[Attack]) -> list[Attack]:
        unique_names(attacks)
        return attacks

    @model_validator(mode="after")
    def _attacks_alone(self) -> QADataset:
        if self.attacks and self.corpus:
            raise IdleSetting(
                ("attacks",),
                "dataset.attacks cannot be used with dataset.corpus: the added paragraphs would enter"
                " every task's corpus",
            )
        return self

    def identity(self) -> dict[str, Any]:
        """The attacks, when there are any (as before attacks existed when there are none, so
        those run folders still resume), each as stored before ``category`` was renamed from
        ``family`` (``Attack.stored``), so those run folders still resume too."""
        return {"attacks": [a.stored() for a in self.attacks]} if self.attacks else {}

    @classmethod
    def said(cls, key: str) -> Callable[[Any], str] | None:
        """A run's attacks by name, or none."""
        return _attacked if key == "attacks" else None

    @classmethod
    def read_back(cls, key: str, value: Any) -> Any:
        """Stored attacks as ``identity`` gives them now: one stored before ``category`` (then
        ``family``) or ``templates`` existed has neither, read as none (its default), so those
        run folders still resume; attacks that no longer read stay as stored."""
        if key != "attacks" or not isinstance(value, list):
            return value
        try:
            return [Attack.read_stored(a).stored() for a in value]
        except (ValueError, TypeError):  # a ValidationError is a ValueError
            return value


def _attacked(attacks: Any) -> str:
    names = [Attack.read_stored(a).label for a in attacks or []]  # a stored identity's
    return f"the attacks {', '.join(names)}" if names else "no attacks"


class DesignerSettings(Settings):
    """Retrieval the L3 designer issues for the executor: a small model that fails to search for
    the next hop is given the searches, as steps of its try."""

    first_search: Literal["question"] | None = Field(
        None, description="question: every try starts with a search for the question's content words"
    )
    follow_up: Literal["bridge"] | None = Field(
        None,
        description="bridge: the executor may name an intermediate entity (action bridge), and the "
        "designer searches for it with the rest of the question's words",
    )


class QAGuard(Settings):
    """The duplicate-search rollback, a loop guard of qa's steps (a configuration's ``guard``
    group, read with ``guards: true``)."""

    duplicate_search: bool = setting(
        "guards", False, description="roll back a search already run in this try that returned results"
    )
    duplicate_rollbacks: int = Field(3, ge=0, description="rollbacks of duplicate searches per try")

    @model_validator(mode="after")
    def _rollbacks_read(self) -> QAGuard:
        if "duplicate_rollbacks" in self.model_fields_set and not self.duplicate_search:
            raise IdleSetting(
                ("duplicate_rollbacks",),
                "guard.duplicate_rollbacks is read by the duplicate-search rollback (guards and"
                " guard.duplicate_search), which this configuration does not run",
            )
        return self


class QASteps(Settings):
    """What qa's executor steps read of a configuration."""

    finish: Literal["answer", "hops"] = Field(
        "answer",
        description="hops: the executor's finish names its chain, hops: [{entity, paragraph}, ...] "
        "ending with the answer (in the step's JSON schema); its evidence is the hops' paragraphs",
    )
    designer: DesignerSettings = Field(default_factory=DesignerSettings)
    tools: list[str] | None = Field(
        None,
        min_length=1,
        description="the executor's tools, by registered name (@vreact.tool; vreact plugins lists them),"
        " in the order its prompt and the planner tell them; default: search and read. Finish and"
        " abstain are always there (docs/tools.md)",
    )
    guard: QAGuard = Field(default_factory=QAGuard)

    @field_validator("tools")
    @classmethod
    def _registered_tools(cls, tools: list[str] | None) -> list[str] | None:
        """Registered tools, each named once (a typo fails here, naming the closest)."""
        if tools is None:
            return None
        from vreact.tools import tool_of

        for name in tools:
            if name in (*FINALS, "bridge"):
                raise ValueError(f"{name!r} is an action of every step, not a tool to offer")
            tool_of(name)  # raises, naming the closest registered tool
        if len(set(tools)) < len(tools):
            raise ValueError("a tool is named twice")
        return tools

    @model_validator(mode="after")
    def _designer_searches(self) -> QASteps:
        """The designer's searches need the search tool among the configuration's tools."""
        if self.tools is not None and "search" not in self.tools:
            for name in ("first_search", "follow_up"):
                if getattr(self.designer, name):
                    raise SettingError(
                        ("designer", name), f"designer.{name} issues searches: tools must name search"
                    )
        return self
