"""More wrappers looked through, shells that read code from input, prompt and indirect
expansions of values bash sets itself. What each kind of wrapper means to allow rules; the
deny side and the real-bash cross-check are the tables of tests/unit/core/shell/test_evaluation.py.

The tests of tests/unit/core/shell/test_wrappers.py that start processes."""

from __future__ import annotations

from swarm.core.records.protocol import PermissionRequest
from swarm.ops.approvals import deny_permission, pending_permissions
from tests.support.agent_fixtures import Crew
from tests.support.helpers import wait_until


def test_a_teammate_asks_before_a_prompt_expansion_of_its_new_directory(crew: Crew) -> None:
    """The issue's reproduction on a real `swarm agent` (shell model, default mode, allow mkdir,
    cd and echo; no deny rule): it asks; the lead denies; the file survives."""
    victim = crew.workdir / "victim"
    victim.write_text("keep me")
    new = "$(cd ..; rm victim)"  # the directory's name: its prompt expansion runs in it
    command = f"mkdir -p '{new}' && cd '{new}' && echo ${{PWD@P}}"
    crew.spawn("w1", prompt=f"$ {command}", permission_mode="default",
               allow=("Bash(mkdir:*)", "Bash(cd:*)", "Bash(echo:*)"))
    (request,) = wait_until(lambda: [p for p in pending_permissions(crew.team)
                                     if p.message.sender == "w1"], 15,
                            message=f"a permission request (log: {crew.log('w1')[-600:]})")
    asked = request.message.structured()
    assert isinstance(asked, PermissionRequest)
    assert asked.tool_name == "Bash" and asked.input == {"command": command}
    assert victim.read_text() == "keep me"
    deny_permission(crew.team, asked.request_id, "no prompt expansion")
    crew.wait_idle_notes("w1", 1)
    assert victim.read_text() == "keep me"
    assert not (crew.workdir / new).exists()
