"""`swarm send` through the installed executable: stdin that is not UTF-8 is exit 2 and sends
nothing (the inbox's views in-process: tests/unit/cli/test_messaging.py)."""

from __future__ import annotations

import os
import subprocess

from swarm.core.records.names import LEAD_NAME
from swarm.core.team.team import Team
from tests.support.cli_runner import SWARM
from tests.support.helpers import one_error


def test_send_of_stdin_that_is_not_utf8_is_exit_2_and_sends_nothing(team: Team) -> None:
    proc = subprocess.run([SWARM, "send", "team-lead", "-", "--team", "alpha"],
                          input=b"\xff\xfe", capture_output=True, timeout=30,
                          env={**os.environ})
    assert proc.returncode == 2, proc.stderr
    one_error(proc.stderr.decode(), "UTF-8")
    assert Team("alpha").inbox(LEAD_NAME, checked=False).messages(include_archive=True) == []
