"""examples/ (the scripted lead and teammate `swarm demo --lead` runs) and docs/scripted.md: the
example files load, the scripted teammate does what the doc says, and the doc's lists of tool
names are generated from the tool definitions (a test fails when a tool changes and the doc
does not)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from swarm.lead.lead_tools import lead_tools
from swarm.ops.demo import EXAMPLES, LEAD_SCRIPT, TEAMMATE_SCRIPT
from swarm.runtime.models.scripted import load_turns, to_blocks
from swarm.runtime.tools.base import Tool
from swarm.runtime.tools.registry import all_tools

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "scripted.md"


def tool_line(tool: Tool, when: str = "") -> str:
    schema = tool.input_schema
    required = list(schema.get("required") or [])
    optional = [name for name in schema.get("properties", {}) if name not in required]
    inputs = ", ".join(required) + ("; " if required and optional else "") + ", ".join(
        f"{name}?" for name in optional)
    return f"- `{tool.name}({inputs})`{when}"


def lead_tool_lines() -> list[str]:
    """Every tool a lead can have, in the order it gets them, and when it has it."""
    full = lead_tools("lead", coordinator=False)
    plain = lead_tools("human", coordinator=False)
    coordinator = lead_tools("lead", coordinator=True)
    lines = []
    for name, tool in full.items():
        when = ""
        if name not in plain:
            when = " (with `--approvals lead`)"
        elif name not in coordinator:
            when = " (not with `--coordinator`)"
        lines.append(tool_line(tool, when))
    return lines


def teammate_tool_lines() -> list[str]:
    return [tool_line(tool) for tool in all_tools().values()]


def doc_section(name: str) -> list[str]:
    text = DOC.read_text()
    found = re.search(rf"<!-- {name}: generated.*?-->\n(.*?)<!-- end {name} -->", text, re.DOTALL)
    assert found, f"docs/scripted.md has no <!-- {name}: generated ... --> section"
    return found.group(1).strip().splitlines()


@pytest.mark.parametrize(("section", "lines"), [("lead tools", lead_tool_lines),
                                                 ("teammate tools", teammate_tool_lines)])
def test_the_docs_tool_lists_match_the_definitions(section: str, lines: object) -> None:
    expected = lines()  # type: ignore[operator]
    assert doc_section(section) == expected, (
        f"update the {section} in docs/scripted.md to:\n" + "\n".join(expected))


def test_the_examples_use_only_tools_their_roles_have() -> None:
    lead_names = set(lead_tools("human", coordinator=False))
    teammate_names = set(all_tools())
    for path, names in ((LEAD_SCRIPT, lead_names), (TEAMMATE_SCRIPT, teammate_names)):
        turns = load_turns(path)
        used = [b["name"] for turn in turns for b in to_blocks(turn) if b["type"] == "tool_use"]
        assert used and set(used) <= names, (path, set(used) - names)
    assert (ROOT / "examples").resolve() == EXAMPLES  # the top-level folder is the packaged one
    assert "scripted:examples/lead.yaml" in DOC.read_text()


