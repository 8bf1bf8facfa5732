"""The foundation commands (`swarm team ...`, `swarm send`, `swarm inbox`, `swarm tasks ...`)
through the installed `swarm` executable or a fresh interpreter: the real stderr format and exit
codes end to end, and what a light command imports (in-process: tests/unit/cli/test_main.py)."""

from __future__ import annotations

import os
import subprocess
import sys

from swarm.core.records.protocol import MAX_MESSAGE_BYTES
from swarm.core.store import paths
from swarm.core.team.team import Team
from tests.unit.cli.test_main import ROOT, assert_one_error, run_exe


def test_corrupt_team_file_fails_clearly_via_the_executable(team: Team) -> None:
    paths.team_config("alpha").write_text('{"name": "alpha", "memb')
    result = run_exe("team", "show", "alpha")
    assert_one_error(result, 1, "corrupt", "moved aside")
    assert result.err.startswith("swarm: warning:")
    assert len(list(paths.team_dir("alpha").glob("config.json.corrupt-*"))) == 1


def test_send_with_agent_id_env_via_the_executable(team: Team) -> None:
    result = run_exe("send", "alice", "-", stdin="piped text",
                     env={"SWARM_AGENT_ID": "bob@alpha", "SWARM_TEAM": "alpha"})
    assert result.code == 0 and result.err == ""
    [message] = team.inbox("alice").messages()
    assert (message.sender, message.text) == ("bob", "piped text")


def test_oversized_message_via_the_executable(team: Team) -> None:
    result = run_exe("send", "--team", "alpha", "alice", "-", stdin="x" * (MAX_MESSAGE_BYTES + 1))
    assert_one_error(result, 2, str(MAX_MESSAGE_BYTES))
    assert not paths.inbox("alpha", "alice").exists()


def test_unknown_recipient_via_the_executable(team: Team) -> None:
    result = run_exe("send", "--team", "alpha", "carol", "hi")
    assert_one_error(result, 2, "'carol' is not a member")
    assert not paths.inbox("alpha", "carol").exists()


def test_debug_shows_the_traceback(team: Team) -> None:
    result = run_exe("send", "--team", "alpha", "carol", "hi", env={"SWARM_DEBUG": "1"})
    assert result.code == 2 and "Traceback" in result.err
    assert result.error_lines()


def test_light_commands_do_not_import_the_sdk_or_tmux(team: Team) -> None:
    """Start-up cost is a feature: `swarm send` and friends load no SDK, tmux, rich or
    portalocker. (importlib.metadata is pydantic's: its plugin scan, paid as it is.)"""
    code = (
        "import sys\nfrom swarm.cli.main import main\n"
        "for argv in (['send', '--team', 'alpha', 'alice', 'hi'], ['inbox', '--team', 'alpha'],"
        " ['tasks', 'list', '--team', 'alpha'], ['team', 'list']):\n"
        "    try:\n        main(argv)\n    except SystemExit as e:\n        assert e.code == 0\n"
        "heavy = sorted(m for m in ('anthropic', 'libtmux', 'rich', 'portalocker')"
        " if m in sys.modules)\n"
        "print('HEAVY=' + ','.join(heavy))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "HEAVY="


def test_the_cli_changes_no_environment_and_stands_in_for_no_module() -> None:
    """No stand-in for a library's private modules; the CLI leaves the environment (which
    the teammates and their commands inherit) as it found it."""
    code = (
        "import os, sys\nimport swarm.cli.main\nfrom swarm.cli.main import main\n"
        "from swarm.core.team.team import Team\nTeam.create('probe')\n"
        "loader = sys.modules.get('pydantic.plugin._loader')\n"
        "assert loader is None or loader.__spec__ is not None, loader\n"
        "print(sorted(k for k in os.environ if 'PYDANTIC' in k))\n"
    )
    env = {k: v for k, v in os.environ.items() if "PYDANTIC" not in k}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, cwd=ROOT, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["[]"]
