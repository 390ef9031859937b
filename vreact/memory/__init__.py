"""Memory: the context assembler, which builds each role's input from the run's records."""

from vreact.memory._assembler import ContextAssembler, ContextSchemaError, Scope
from vreact.origin import Tagged, origins_in, tag

__all__ = ["ContextAssembler", "ContextSchemaError", "Scope", "Tagged", "origins_in", "tag"]
