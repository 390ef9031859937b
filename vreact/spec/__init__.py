"""Declarative files: L1 specs, verifier sets and the per-role context schema."""

from vreact.spec._builtin import (
    UnknownConfiguration,
    builtin_configs,
    builtin_dir,
    load_experiment,
    load_roles,
    load_spec,
    load_verifiers,
    resolve_configs,
)
from vreact.spec._loader import SpecError, load_file, validate_files
from vreact.spec._models import (
    CONTEXT_FIELDS,
    KINDS,
    AnswerRequirements,
    Experiment,
    GateRef,
    JudgeSpec,
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
    "Experiment",
    "GateRef",
    "JudgeSpec",
    "RoleRow",
    "RoleSchema",
    "SpecError",
    "TaskSpec",
    "UnknownConfiguration",
    "VerifierSet",
    "VerifierSpec",
    "builtin_configs",
    "builtin_dir",
    "load_experiment",
    "load_file",
    "load_roles",
    "load_spec",
    "load_verifiers",
    "resolve_configs",
    "validate_files",
]
