VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test test-agents lint bench demo demo-lead wheel install clean flake-hunt

# The interpreter a new venv is made from: the system's python3 when it is 3.11+ with its venv
# module (a distribution's build, made with PGO and LTO), else python3 from PATH (pyenv builds
# without them by default: the suite's processes spend about 13 % more CPU there;
# docs/PERFORMANCE.md). An existing venv is kept.
BASE_PYTHON ?= $(shell for p in /usr/bin/python3 python3; do \
	$$p -c 'import sys, ensurepip, venv; sys.exit(sys.version_info < (3, 11))' 2>/dev/null \
	&& { echo $$p; break; }; done)

$(STAMP): pyproject.toml
	test -x $(PY) || $(or $(BASE_PYTHON),python3) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

# The tests wait on subprocesses much of the time: more workers than cores keeps both busy
# (`make test` with 4 leaves a third of the idle core-seconds 3 left; docs/PERFORMANCE.md).
# The agent CLIs' tests start heavier processes (Node.js): 3 at a time.
TEST_WORKERS ?= 4
AGENT_TEST_WORKERS ?= 3

# `make test`: every test but the real agent CLIs' (tests/unit and tests/system);
# `make test-agents`: the tests that drive the real Claude Code, Codex and Gemini CLI
# (tests/agents). docs/design/tests.md maps the tree.
test: $(STAMP)
	@# Bytecode once for the hundreds of `swarm` processes the tests start (under
	@# PYTHONDONTWRITEBYTECODE each would compile the package again).
	$(PY) -m compileall -q swarm >/dev/null
	$(PY) -m pytest -n $(TEST_WORKERS) --dist worksteal --ignore=tests/agents $(PYTEST_ARGS)

test-agents: $(STAMP)
	$(PY) -m compileall -q swarm >/dev/null
	$(PY) -m pytest -n $(AGENT_TEST_WORKERS) --dist worksteal tests/agents $(PYTEST_ARGS)

# The suite again and again (fresh clones, CI=true, one core kept busy): each failure tallied.
flake-hunt: $(STAMP)
	$(PY) scripts/flake_loop.py --runs 5 --load 1

lint: $(STAMP)
	$(VENV)/bin/ruff check swarm tests scripts
	$(VENV)/bin/mypy
	$(VENV)/bin/mypy --explicit-package-bases --follow-imports=silent scripts
	$(VENV)/bin/mypy tests/support
	$(VENV)/bin/lint-imports

bench: $(STAMP)
	$(PY) scripts/bench_mailbox.py
	@if [ -f scripts/bench_agents.py ]; then $(PY) scripts/bench_agents.py; fi

demo: $(STAMP)
	$(VENV)/bin/swarm demo

demo-lead: $(STAMP)
	$(VENV)/bin/swarm demo --lead

# Install from the clone without PyPI: the wheel in dist/, then `pipx install` it (its
# dependencies come from the index). WHEEL_FLAGS=--no-build-isolation builds offline with
# PYTHON's own setuptools (tests/system/cli/test_wheel.py).
PYTHON ?= python3
WHEEL_FLAGS ?=

wheel:
	rm -rf dist build
	$(PYTHON) -m pip wheel -q --no-deps $(WHEEL_FLAGS) -w dist .

install: wheel
	pipx install --force dist/swarm_teams-*.whl

clean:
	rm -rf $(VENV) *.egg-info build dist
