"""Tool inputs (docs/design/tool-inputs.md): bad input from a model (a missing field, a wrong
type) is one error result naming every problem, never an exception into the loop: nothing runs
and nobody is asked about the call. An unknown field is ignored, and hooks and permission rules
see the input as the model sent it. An input edited when approving is validated too. A tool of
an external MCP server has no model: its input is passed on as sent.

The tests of tests/unit/runtime/tools/test_builtin_inputs.py that start processes."""

from __future__ import annotations

import subprocess
import sys


def test_no_input_model_is_built_at_import() -> None:
    """A teammate's tools load their inputs at first use (`Tool.input_ref`), and every input
    model is `defer_build`: nothing pays at start-up for validators it may never use."""
    code = ("import sys, swarm.runtime.teammate.agent\n"
            "assert 'pydantic' not in sys.modules, 'a teammate imports pydantic'\n"
            "import swarm.lead.lead_tools, swarm.mcp_server.wait_tools, swarm.runtime.tools.builtin_inputs\n"
            "import swarm.runtime.tools.team_tool_inputs, swarm.runtime.subagents.tool_inputs\n"
            "from swarm.runtime.tools.schema import ToolInput\n"
            "def every(c): return [c] + [s for k in c.__subclasses__() for s in every(k)]\n"
            "built = [c.__name__ for c in every(ToolInput) if c.__pydantic_complete__]\n"
            "print(len(every(ToolInput)), built)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split(maxsplit=1)
    assert int(out[0]) >= 20 and out[1].strip() == "[]"
