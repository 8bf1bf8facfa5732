"""The JSON schemas the models are shown for swarm's own tools (the Anthropic and OpenAI tool
definitions and `swarm mcp serve`'s tool list are built from `input_schema`). A change to one is
a change to what every model sees: it must be made on purpose, in tests/data/tool_schemas.json
(rewrite it with `python tests/unit/runtime/tools/test_schema.py`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[4]
if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))

from swarm.lead.lead_tools import lead_tools  # noqa: E402
from swarm.mcp_server.wait_tools import (  # noqa: E402
    LeadReadInbox,
    LeadWaitForTeam,
    ReadInbox,
    TeamCreate,
    WaitForTeam,
)
from swarm.runtime.subagents.tools import ParentMessage  # noqa: E402
from swarm.runtime.tools.registry import all_tools  # noqa: E402

SNAPSHOT = ROOT / "tests" / "data" / "tool_schemas.json"


def every_tool_schema() -> dict[str, dict[str, Any]]:
    """Each built-in tool's input_schema, by class name (a lead's SendMessage is its own class)."""
    tools = [*all_tools().values(), *lead_tools("lead", coordinator=False).values(),
             *lead_tools("lead", coordinator=True).values(),
             ParentMessage("team-lead", "t", lambda text, summary: None),
             ReadInbox(), LeadReadInbox(), WaitForTeam(), LeadWaitForTeam(), TeamCreate()]
    return {type(tool).__name__: tool.input_schema for tool in tools}


def test_every_tool_shows_the_models_the_same_schema() -> None:
    expected = json.loads(SNAPSHOT.read_text())
    actual = json.loads(json.dumps(every_tool_schema()))  # tuples and the like as JSON has them
    assert sorted(actual) == sorted(expected)
    for name, schema in expected.items():
        assert actual[name] == schema, name
        # The order of the properties is part of what the model reads.
        assert list(actual[name]["properties"]) == list(schema["properties"]), name


if __name__ == "__main__":
    SNAPSHOT.write_text(json.dumps(every_tool_schema(), indent=1) + "\n")
