"""The roles that call models: the planner (L2), the designer (L3, no model), the executor."""
