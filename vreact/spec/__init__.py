"""Declarative files: L1 specs, verifier sets and the per-role context schema."""

from vreact.spec._builtin import builtin_dir, load_roles, load_spec, load_verifiers
from vreact.spec._loader import SpecError, load_file, validate_files
from vreact.spec._models import (
    CONTEXT_FIELDS,
    KINDS,
    AnswerRequirements,
    GateRef,
    RoleRow,
    RoleSchema,
    TaskSpec,
    VerifierSet,
    VerifierSpec,
)

__all__ = [
    "CONTEXT_FIELDS",
    "KINDS",
    "AnswerRequirements",
    "GateRef",
    "RoleRow",
    "RoleSchema",
    "SpecError",
    "TaskSpec",
    "VerifierSet",
    "VerifierSpec",
    "builtin_dir",
    "load_file",
    "load_roles",
    "load_spec",
    "load_verifiers",
    "validate_files",
]
