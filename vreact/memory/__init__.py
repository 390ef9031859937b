"""Memory: the run store, the success ledger and failure index, and the context assembler."""

from vreact.memory._assembler import ContextAssembler, ContextSchemaError, Scope
from vreact.memory._store import MIGRATIONS, Store

__all__ = ["MIGRATIONS", "ContextAssembler", "ContextSchemaError", "Scope", "Store"]
