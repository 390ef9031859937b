"""``mock/...``: a scripted model for tests, registered like any other provider."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from vreact.model._base import (
    DEFAULT_SETTINGS,
    Completion,
    Cutoff,
    GenerateSettings,
    Message,
    ModelError,
    ToolSpec,
)

Output = str | dict[str, Any] | BaseException | Completion
Script = Iterable[Output] | Callable[[list[Message]], Output]


class MockScriptExhausted(ModelError):
    """The mock model was called more often than its script has outputs."""


class MockModel:
    """Answers from a script: a list, a generator, or a function of the messages.

    A dict is sent as JSON; an exception instance is raised (to stand for a provider error); a
    ``Completion`` is the reply as it is (a reply stopped at its allowance: ``stop_reason``).
    Every call's messages are kept in ``calls``, and its settings in ``settings``, so tests can
    read what each role was shown and how it was asked.
    """

    takes_cutoff = True  # generate() takes a Cutoff (one already passed ends the call)

    def __init__(self, outputs: Script, name: str = "mock/scripted") -> None:
        self.name = name
        self.endpoint = "mock"
        self._fn: Callable[[list[Message]], Output] | None = None
        self._it: Iterator[Output] | None = None
        if callable(outputs):
            self._fn = outputs
        else:
            self._it = iter(outputs)
        self.calls: list[list[Message]] = []
        self.settings: list[GenerateSettings] = []
        self.schemas: list[dict[str, Any] | None] = []  # each call's JSON schema
        self.tools: list[list[ToolSpec] | None] = []  # each call's native tools (actions: native)

    def generate(
        self,
        messages: list[Message],
        schema: dict[str, Any] | None = None,
        settings: GenerateSettings = DEFAULT_SETTINGS,
        cutoff: Cutoff | None = None,
        tools: list[ToolSpec] | None = None,
    ) -> Completion:
        """The script's next output (a native call's is ``native_reply``'s text, as scripted)."""
        if cutoff is not None:  # it answers at once: only a cutoff already passed ends it
            cutoff.check()
        self.calls.append([dict(m) for m in messages])
        self.settings.append(settings)
        self.schemas.append(schema)
        self.tools.append(tools)
        if self._fn is not None:
            out = self._fn(messages)
        else:
            assert self._it is not None
            try:
                out = next(self._it)
            except StopIteration:
                raise MockScriptExhausted(
                    f"{self.name}: the script ran out after {len(self.calls) - 1} output(s)"
                ) from None
        if isinstance(out, BaseException):
            raise out
        if isinstance(out, Completion):
            return out
        text = out if isinstance(out, str) else json.dumps(out)
        prompt = sum(len(m["content"]) for m in messages) // 4
        return Completion(text, prompt_tokens=prompt, completion_tokens=len(text) // 4 + 1)
