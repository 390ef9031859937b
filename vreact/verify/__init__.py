"""Verifiers: registered gates (``gates``), LLM judges (``judges``) and the verifier that runs
them, fail closed (``verifier``)."""
