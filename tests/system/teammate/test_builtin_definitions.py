"""The seeds' `code-reviewer` built-in agent type: read-only tools plus Bash (tests, linters),
listed by `swarm agents list` with its tools and a prompt that asks for findings by file:line.

The tests of tests/unit/core/agents/test_builtin.py that start processes."""

from __future__ import annotations

import json

from tests.support.agent_fixtures import Crew
from tests.unit.core.agents.test_builtin import TOOLS


def test_agents_list_shows_code_reviewer_with_its_tools(crew: Crew) -> None:
    proc = crew.cli("agents", "list", "--json")
    assert proc.returncode == 0, proc.stderr
    listed = {d["name"]: d for d in json.loads(proc.stdout)}
    reviewer = listed["code-reviewer"]
    assert reviewer["source"] == "builtin" and reviewer["tools"] == TOOLS
    assert "review" in reviewer["description"].lower()
