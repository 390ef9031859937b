"""Tasks: MuSiQue-style datasets (``dataset``) and MuSiQue's own metrics (``metrics``)."""
