VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test lint bench demo clean

# The compat editable mode is a plain path entry instead of an import hook: ~17 ms off the start
# of every `swarm` command (see docs/PERFORMANCE.md).
$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]' --config-settings editable_mode=compat
	touch $(STAMP)

test: $(STAMP)
	$(PY) -m pytest

lint: $(STAMP)
	$(VENV)/bin/ruff check swarm backends tests scripts
	$(VENV)/bin/mypy

bench: $(STAMP)
	$(PY) scripts/bench_mailbox.py
	@if [ -f scripts/bench_agents.py ]; then $(PY) scripts/bench_agents.py; fi

demo: $(STAMP)
	$(VENV)/bin/swarm demo

clean:
	rm -rf $(VENV) *.egg-info
