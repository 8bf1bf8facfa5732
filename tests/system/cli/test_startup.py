"""Start-up is a feature: each command imports what it uses and builds the models it needs.

The tests of tests/unit/test_startup.py that start processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from swarm.core.team.state import read_state
from swarm.core.team.team import Team
from tests.support.helpers import wait_until
from tests.unit.test_startup import ROOT, SDK_PROBE, SDKS, under


def test_a_shell_teammate_goes_idle_without_the_sdks_or_the_subagent_machinery(
        team: Team, tmp_path: Path) -> None:
    """What `swarm agent` imports before it goes idle (-X importtime of the real process)."""
    team.add_member("worker", model="shell")
    log = tmp_path / "imports.txt"
    with open(log, "w") as err:
        proc = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "swarm", "agent",
                                 "--agent-id", "worker@alpha"], stdout=subprocess.DEVNULL,
                                stderr=err, cwd=tmp_path, start_new_session=True)
    try:
        wait_until(lambda: (s := read_state("alpha", "worker")) is not None
                   and s.state == "idle", timeout=30, message="the teammate to go idle")
        idle_imports = {line.rsplit("|", 1)[1].strip() for line in log.read_text().splitlines()
                        if line.startswith("import time:") and "|" in line}
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=15)
    assert "swarm.runtime.teammate.agent" in idle_imports  # the log is the agent's
    assert not under(idle_imports, *SDKS, "backends", "swarm.ops", "swarm.lead", "swarm.cli.common")
    # Tool inputs, hook entries and MCP specs are pydantic models, loaded at first use.
    assert not under(idle_imports, "pydantic", "pydantic_core"), "pydantic before idle"
    assert not {"swarm.runtime.subagents.subagent", "swarm.runtime.subagents.worktree",
                "swarm.runtime.extensions.mcp_client", "swarm.core.team.worktrees"} & idle_imports



def test_a_provider_sdk_imports_with_the_collector_paused_then_frozen() -> None:
    # Left on, the collector runs hundreds of passes during `import anthropic`, its full ones
    # walking everything imported so far; big_import pauses it and freezes what the SDK built.
    proc = subprocess.run([sys.executable, "-c", SDK_PROBE], capture_output=True, text=True,
                          timeout=60, cwd=ROOT, env={**os.environ, "ANTHROPIC_API_KEY": "k",
                                                     "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"})
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    assert found["sdk"] and found["enabled"]  # imported, and the collector back on after
    assert found["passes"] < 30  # ~300 with the collector left on; a few for the client after
    assert found["frozen"] > 100_000  # the SDK's objects are out of every later collection
