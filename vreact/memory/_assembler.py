"""The context assembler: each role's input, built only from what its row may read, and only
from values whose origins its row does not exclude."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from vreact.origin import origins_in
from vreact.records import Store
from vreact.spec import CONTEXT_FIELDS, RoleSchema
from vreact.v import V


class ContextSchemaError(PermissionError):
    """A role asked for something outside its row of memory/roles.yaml, or was about to be handed
    a value whose origin its row never reads."""


@dataclass
class Scope:
    """Where a context is being assembled: the attempt and the components whose failure
    entries count as the role's own (an executor's, plus the final answer's for the subtask
    that produces it).

    ``sources`` holds the values the controller owns (objective, contract, the current
    try's steps...). The assembler hands a role only those its row names.
    """

    attempt_id: int
    components: tuple[str, ...]
    sources: dict[str, Any] = field(default_factory=dict)


class ContextAssembler:
    """Builds role inputs from the specs, the ledger and the failure index, under the schema."""

    def __init__(self, roles: RoleSchema, store: Store) -> None:
        self.roles = roles
        self.store = store
        self._memory: dict[str, Callable[[Scope], Any]] = {
            "failures.own": self._own_failures,
            "failures.rejected": self._rejected,
            "failures.l2": self._l2_failures,
            "ledger": self._ledger,
        }

    def allowed(self, role: str) -> list[str]:
        if role not in self.roles.roles:
            raise ContextSchemaError(f"role {role!r} has no row in memory/roles.yaml")
        return self.roles.roles[role].reads

    def read(self, role: str, name: str, scope: Scope) -> Any:
        """One field for one role; a field outside the role's row, or a value in it whose origin
        the row never reads, raises ContextSchemaError."""
        allowed = self.allowed(role)
        if name not in allowed:
            raise ContextSchemaError(
                f"role {role!r} may not read {name!r} (memory/roles.yaml allows: {', '.join(allowed)})"
            )
        if name in self._memory:
            value = self._memory[name](scope)
        elif name in scope.sources:
            value = scope.sources[name]
        else:
            raise KeyError(f"no value for {name!r} in this scope")
        never = self.roles.roles[role].never_reads
        for origin in {CONTEXT_FIELDS[name][1], *origins_in(value)}:
            if origin in never:
                raise ContextSchemaError(
                    f"role {role!r} was about to read {name!r} holding a value from {origin!r},"
                    " which its row in memory/roles.yaml never reads"
                )
        return value

    def build(self, role: str, scope: Scope) -> dict[str, Any]:
        """Every field of the role's row that this scope provides, and nothing else."""
        out = {}
        for name in self.allowed(role):
            if name in self._memory or name in scope.sources:
                out[name] = self.read(role, name, scope)
        return out

    def _own_failures(self, scope: Scope) -> list[dict[str, str]]:
        own = scope.components  # the attempt's index is oldest first: its rows of these components
        return _causes([r for r in self.store.failures(scope.attempt_id) if r["component"] in own])

    def _rejected(self, scope: Scope) -> Any:
        """What the scope's components' last rejection was of (its artifact's identity, as the
        verdict's hash is of: for code, the program), or None."""
        own = scope.components
        rows = [r for r in self.store.failures(scope.attempt_id) if r["component"] in own]
        found = [r["artifact"] for r in rows if r.get("artifact") is not None]
        return found[-1] if found else None

    def _l2_failures(self, scope: Scope) -> list[dict[str, str]]:
        # rejections the planner answers for: those routed to it or to the top (plan, R2, R3)
        rows = self.store.failures(scope.attempt_id)
        return _causes([r for r in rows if V[r["verifier"]].route in ("planner", "top")])

    def _ledger(self, scope: Scope) -> list[dict[str, Any]]:
        """The attempt's accepted units of the scope's components, oldest first."""
        rows = self.store.ledger(scope.attempt_id)
        return [r for r in rows if r["component"] in scope.components]


def _causes(rows: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Causes, never transcripts: only the failure index's own columns."""
    return [
        {
            "level": r["level"],
            "verifier": r["verifier"],
            "check_name": r["check_name"],
            "cause": r["cause"],
            "detail": r["detail"],
        }
        for r in rows
    ]
