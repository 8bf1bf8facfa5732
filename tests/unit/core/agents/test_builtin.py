"""The seeds' `code-reviewer` built-in agent type: read-only tools plus Bash (tests, linters),
listed by `swarm agents list` with its tools and a prompt that asks for findings by file:line."""

from __future__ import annotations

from pathlib import Path

from swarm.core.agents.definitions import effective_tools, load_definitions
from swarm.core.records.names import KNOWN_TOOLS, TEAM_TOOLS

TOOLS = ["Read", "Glob", "Grep", "Bash"]


def test_code_reviewer_cannot_edit_and_reports_by_file_and_line(tmp_path: Path) -> None:
    loaded = load_definitions(tmp_path)
    assert loaded.problems == []
    reviewer = loaded.definitions["code-reviewer"]
    tools = effective_tools(reviewer, list(KNOWN_TOOLS), TEAM_TOOLS)
    assert {"Read", "Glob", "Grep", "Bash", "SendMessage"} <= set(tools)
    assert not {"Write", "Edit"} & set(tools)
    for word in ("diff", "bugs", "security", "style", "file:line", "never change files"):
        assert word in reviewer.prompt, word
