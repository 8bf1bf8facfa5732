"""examples/ (the scripted lead and teammate `swarm demo --lead` runs) and docs/scripted.md: the
example files load, the scripted teammate does what the doc says, and the doc's lists of tool
names are generated from the tool definitions (a test fails when a tool changes and the doc
does not)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from swarm.core.records.protocol import ShutdownResponse
from swarm.lead.lead_tools import lead_tools
from swarm.ops.demo import EXAMPLES, LEAD_SCRIPT, TEAMMATE_SCRIPT
from swarm.runtime.models.scripted import load_turns, to_blocks
from swarm.runtime.tools.base import Tool
from swarm.runtime.tools.registry import all_tools
from tests.support.agent_fixtures import Crew
from tests.support.helpers import wait_until

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


def test_the_scripted_teammate_reports_and_agrees_to_shut_down(crew: Crew) -> None:
    """As docs/scripted.md says: it looks around with read-only tools (no asking, in the
    default mode), tells the lead, and approves the shutdown request it is sent next."""
    crew.spawn("scout", prompt="Look around.", model=f"scripted:{TEAMMATE_SCRIPT}",
               permission_mode="default")
    report = wait_until(lambda: [m for m in crew.lead_messages() if m.sender == "scout"], 20,
                        message="the scout's report")[0]
    assert report.summary == "looked around" and "swarm transcript scout" in report.text
    crew.wait_state("scout", "idle")
    proc = crew.cli("shutdown", "scout", "--timeout", "15")
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert crew.exit_code("scout") == 0
    answers = [m.structured() for m in crew.lead_messages() if m.sender == "scout"]
    assert any(isinstance(a, ShutdownResponse) and a.approve for a in answers)
    results = [json.dumps(b) for e in crew.transcript("scout") if e.get("kind") == "message"
               for b in e["message"]["content"] if isinstance(b, dict)
               and b.get("type") == "tool_result"]
    assert results and not any("permission" in r for r in results)  # nothing had to ask
