"""examples/ (the scripted lead and teammate `swarm demo --lead` runs) and docs/scripted.md: the
example files load, the scripted teammate does what the doc says, and the doc's lists of tool
names are generated from the tool definitions (a test fails when a tool changes and the doc
does not).

The tests of tests/unit/test_examples.py that start processes."""

from __future__ import annotations

import json

from swarm.core.records.protocol import ShutdownResponse
from swarm.ops.demo import TEAMMATE_SCRIPT
from tests.support.agent_fixtures import Crew
from tests.support.helpers import wait_until


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
