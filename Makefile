VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test lint bench demo demo-lead clean

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

# The tests wait on subprocesses much of the time: more workers than cores keeps both busy.
TEST_WORKERS ?= 3

test: $(STAMP)
	@# Bytecode once for the hundreds of `swarm` processes the tests start (under
	@# PYTHONDONTWRITEBYTECODE each would compile the package again).
	$(PY) -m compileall -q swarm >/dev/null
	$(PY) -m pytest -n $(TEST_WORKERS) --dist worksteal

lint: $(STAMP)
	$(VENV)/bin/ruff check swarm tests scripts
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

bench: $(STAMP)
	$(PY) scripts/bench_mailbox.py
	@if [ -f scripts/bench_agents.py ]; then $(PY) scripts/bench_agents.py; fi

demo: $(STAMP)
	$(VENV)/bin/swarm demo

demo-lead: $(STAMP)
	$(VENV)/bin/swarm demo --lead

clean:
	rm -rf $(VENV) *.egg-info
