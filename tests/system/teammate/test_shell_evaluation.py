"""Bash rules against bash's own evaluation: every string
bash may evaluate as code is parsed and checked, or makes the command opaque; what opaque means
in each mode. Unit tests of `swarm.core.shell.rules` (table-driven), and one real teammate.
Protected paths: tests/unit/core/shell/test_protected.py.

The tests of tests/unit/core/shell/test_evaluation.py that start processes."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from swarm.core.records.protocol import PermissionRequest
from swarm.core.shell.parse import parse
from swarm.ops.approvals import deny_permission, pending_permissions
from tests.support.agent_fixtures import Crew
from tests.support.bash_cases import OPAQUE, PARSED
from tests.support.helpers import wait_until
from tests.unit.core.shell.test_evaluation import LOGIN_SHELL


def test_whatever_real_bash_runs_the_parse_sees_or_calls_opaque(tmp_path: Path) -> None:
    """The tables above against the real bash: each command with `touch ran` for `rm victim`,
    in a fresh directory; whenever bash runs it (a `ran` anywhere below: `cd` may move first),
    the parse must show a `touch` or be opaque."""
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    ran, missed = 0, []
    for number, command in enumerate(c.replace("rm victim", "touch ran") for c in OPAQUE + PARSED):
        if command == "fc -s" or LOGIN_SHELL.search(command):
            # fc reruns the history: nothing to run here. A login shell of another user (root,
            # here) reads that user's real profile, which may hang (pyenv rehash): its parse
            # is checked by the tables, not run.
            continue
        here = tmp_path / str(number)
        here.mkdir()
        (here / "n.txt").write_text("a[$(touch ran)]\n")
        (here / "env.sh").write_text("x='a[$(touch ran)]'\n")
        subprocess.run(["bash", "-c", command], cwd=here, env=env, timeout=10,
                       stdin=subprocess.DEVNULL, capture_output=True)
        if not any(here.rglob("ran")):
            continue
        ran += 1
        commands = parse(command)
        if not any(c.opaque or c.program == "touch" for c in commands):
            missed.append(command)
    assert missed == [], "\n".join(missed)
    assert ran >= len(OPAQUE + PARSED) // 2  # bash did run most of them: the check is real



def test_a_teammate_asks_before_bash_evaluates_code_in_a_subscript(crew: Crew) -> None:
    """The issue's reproduction on a real `swarm agent` (shell model, default mode, allow echo,
    deny rm): neither command runs unasked; the lead denies both; the files survive."""
    victims = [crew.workdir / "victim", crew.workdir / "victim2"]
    for victim in victims:
        victim.write_text("keep me")
    commands = ["echo hi && [[ -v 'a[$(rm victim)]' ]]", "echo $(( 'b[$(rm victim2)]' ))"]
    crew.spawn("w1", prompt="\n".join(f"$ {c}" for c in commands), permission_mode="default",
               allow=("Bash(echo:*)",), deny=("Bash(rm:*)",))
    for command in commands:
        (request,) = wait_until(lambda: [p for p in pending_permissions(crew.team)
                                         if p.message.sender == "w1"], 15,
                                message=f"a permission request for {command!r} "
                                        f"(log: {crew.log('w1')[-600:]})")
        asked = request.message.structured()
        assert isinstance(asked, PermissionRequest)
        assert asked.tool_name == "Bash" and asked.input == {"command": command}
        assert all(v.read_text() == "keep me" for v in victims)  # nothing ran while it waits
        deny_permission(crew.team, asked.request_id, "no code in subscripts")
    crew.wait_idle_notes("w1", 1)
    assert all(v.read_text() == "keep me" for v in victims)
