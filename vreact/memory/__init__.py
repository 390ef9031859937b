"""Memory: the context assembler, which builds each role's input from the run's records."""

from vreact.memory._assembler import ContextAssembler, ContextSchemaError, Scope

__all__ = ["ContextAssembler", "ContextSchemaError", "Scope"]
