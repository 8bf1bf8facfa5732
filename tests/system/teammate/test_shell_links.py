"""Protected paths hold against links and moves.

The tests of tests/unit/core/shell/test_links.py that start processes."""

from __future__ import annotations

from swarm.core.records.protocol import PermissionRequest
from swarm.ops.approvals import deny_permission, pending_permissions
from tests.support.agent_fixtures import Crew
from tests.support.git_helpers import init_repo
from tests.support.helpers import wait_until


def test_a_teammate_asks_before_it_links_or_moves_git(crew: Crew) -> None:
    """A real `swarm agent` (shell model, acceptEdits, allow cp/ln/mv/echo): the ordinary
    command runs unasked, each link or move of `.git` waits for the lead; denied, none ran."""
    repo = init_repo(crew.workdir)
    config = (repo / ".git" / "config").read_text()
    commands = ["cp -l .git/config cfg", "ln -s .git g && echo x >> g/config", "mv .git moved"]
    crew.spawn("w1", prompt="\n".join(f"$ {c}" for c in ["echo ok > ok.txt", *commands]),
               permission_mode="acceptEdits",
               allow=("Bash(cp:*)", "Bash(ln:*)", "Bash(mv:*)", "Bash(echo:*)"))
    for command in commands:
        (request,) = wait_until(lambda: [p for p in pending_permissions(crew.team)
                                         if p.message.sender == "w1"], 15,
                                message=f"a request for {command!r} ({crew.log('w1')[-600:]})")
        asked = request.message.structured()
        assert isinstance(asked, PermissionRequest) and asked.input == {"command": command}
        deny_permission(crew.team, asked.request_id, "no links into .git")
    crew.wait_idle_notes("w1", 1)
    assert (repo / "ok.txt").read_text() == "ok\n"
    assert (repo / ".git" / "config").read_text() == config
    assert not any((repo / name).exists() for name in ("cfg", "g", "moved"))
