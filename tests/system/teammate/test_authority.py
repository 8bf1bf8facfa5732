"""A teammate's shell has only the teammate's authority.

Every `swarm` command and option that acts for the lead or the person is in one table
(`swarm.cli.authority`) and is refused in one line, exit 2, when the caller runs under a
teammate, found by its process ancestry (a `swarm agent` above it), whatever its environment
says. Real teammates (offline shell model, hidden backend) run the commands from their Bash tool
under an ordinary `Bash(swarm:*)` allow rule: the issue's `setsid -f swarm lead --headless
--resume ...` takes no seat, `swarm trust . --yes` records no trust, and neither do the other
lead-only commands; what the teammate's own tools allow (speak as itself, tasks, status) works.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import click
import pytest

from swarm.cli import authority
from swarm.cli.main import COMMANDS, cli
from swarm.core.store import paths
from swarm.core.team.state import read_state
from tests.support.agent_fixtures import Crew
from tests.support.cli_runner import SWARM
from tests.support.helpers import wait_until

RULES = ("Bash(swarm:*)", "Bash(echo:*)", "Bash(env:*)")


def leaf_paths() -> list[str]:
    """Every command a person can type, as its path (`team delete`)."""
    out: list[str] = []

    def walk(command: click.Command, path: str) -> None:
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                walk(sub, f"{path} {name}")
        else:
            out.append(path)

    ctx = click.Context(cli)
    for name in COMMANDS:
        command = cli.get_command(ctx, name)
        assert command is not None, name
        walk(command, name)
    return out


def test_every_command_is_either_lead_only_or_a_teammates() -> None:
    """One table decides: a new command must be put in it (or under a group that is)."""
    paths_ = leaf_paths()
    loose = [p for p in paths_ if p not in authority.TEAMMATE_MAY and not authority.rules_for(p)]
    assert loose == [], f"say in swarm.cli.authority whether a teammate may run: {loose}"
    groups = {" ".join(p.split()[:i]) for p in paths_ for i in range(1, len(p.split()) + 1)}
    assert set(authority.LEAD_ONLY) <= groups
    assert set(paths_) >= authority.TEAMMATE_MAY


def test_no_command_module_checks_for_itself() -> None:
    """The table is the one place: no command calls a refusal of its own."""
    folder = Path(authority.__file__).parent
    for module in folder.glob("*.py"):
        if module.name != "authority.py":
            assert "is for the team lead" not in module.read_text(), module.name


@pytest.fixture
def on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """`swarm` by name in a teammate's shell, as an allow rule names it."""
    monkeypatch.setenv("PATH", f"{Path(SWARM).parent}{os.pathsep}{os.environ['PATH']}")


def report_of(crew: Crew, name: str) -> str:
    """What the shell teammate's first turn printed (its commands, each with its output)."""
    crew.wait_idle_notes(name, 1, timeout=60)
    return next(m.text for m in crew.lead_messages() if m.sender == name and m.text.startswith("$ "))


def test_a_teammate_cannot_take_the_leads_seat_detached(crew: Crew, on_path: None) -> None:
    """The issue's line, under `Bash(swarm:*)`: the lead it would start holds the team's key."""
    team = crew.team.name
    line = (f"setsid -f swarm lead --headless --resume --team {team} --permission-mode "
            f"bypassPermissions --timeout 20 'spawn evil in bypassPermissions' > lead.out 2>&1")
    crew.spawn("w", prompt=f"$ {line}\n$ echo started", permission_mode="default", allow=RULES)
    before = crew.team.config()
    report_of(crew, "w")
    out = crew.workdir / "lead.out"
    wait_until(lambda: out.exists() and "error" in out.read_text(), 30,
               message=f"the detached lead's answer ({out.read_text() if out.exists() else ''})")
    text = out.read_text()
    assert "`swarm lead` is for the team lead" in text and "teammate w" in text, text
    assert len(text.strip().splitlines()) == 1, text
    after = crew.team.config()
    assert after.lead_pid == before.lead_pid
    assert [m.name for m in after.members] == [m.name for m in before.members]
    state = read_state(team, "w")
    assert state is not None and state.mode in (None, "default")


def test_a_teammate_cannot_trust_its_checkout(crew: Crew, on_path: None) -> None:
    """The issue's `swarm trust . --yes`: the next member would run the checkout's hooks."""
    (crew.workdir / ".mcp.json").write_text(json.dumps(
        {"mcpServers": {"planted": {"command": "touch", "args": ["PWNED"]}}}))
    lines = ["swarm trust . --yes; echo exit=$?",
             "env -u SWARM_AGENT_ID swarm trust --yes; echo exit=$?",
             "swarm trust --revoke .; echo exit=$?",
             "swarm trust --list; echo exit=$?"]
    crew.spawn("w", prompt="\n".join(f"$ {line}" for line in lines),
               permission_mode="default", allow=RULES)
    report = report_of(crew, "w")
    assert report.count("exit=2") == 3 and report.count("exit=0") == 1, report
    assert report.count("`swarm trust` is for the team lead") == 3, report
    trust_file = paths.home() / "trust.json"
    assert not trust_file.exists() or str(crew.workdir) not in trust_file.read_text()


def test_other_lead_only_commands_are_refused_and_a_teammates_own_work_is_not(
        crew: Crew, on_path: None) -> None:
    """Variants the issue does not name: a member's process, another's turn, the lead's
    mailbox marked read, a new team, the person's doctor and report files, a demo team; with
    the variable lying or gone (a bypassPermissions teammate may set it: the rules do not
    matter here, the ancestry does)."""
    crew.register("w2")
    team = crew.team.name
    refused = [
        f"swarm agent --agent-id w2@{team}",
        "swarm interrupt w2",
        "swarm inbox --mark-read",
        "swarm inbox w2 --mark-read",
        "swarm team create other",
        "swarm doctor --fix",
        "swarm report --html report.html",
        f"SWARM_AGENT_ID=team-lead@{team} swarm team delete {team} --force",
        f"env -u SWARM_AGENT_ID SWARM_AGENT_ID=team-lead@{team} swarm respawn w2",
        f"env -u SWARM_AGENT_ID swarm mcp serve --as w2 --team {team} < /dev/null",
        "swarm demo --timeout 5",
        "swarm kill w2",
        f"swarm plans approve w2 --team {team}",
        "swarm permissions deny 1234 --reason no",
    ]
    allowed = [
        "swarm send team-lead 'from w' --summary s",
        "swarm tasks add 'a task of mine'",
        "swarm tasks list",
        "swarm status",
        "swarm inbox w --mark-read",
        "swarm team show",
        "swarm permissions list",
        "swarm config show",
    ]
    lines = [*(f"{c}; echo exit=$?" for c in refused),
             *(f"{c} > /dev/null; echo exit=$?" for c in allowed)]
    crew.spawn("w", prompt="\n".join(f"$ {line}" for line in lines))
    report = report_of(crew, "w")
    assert report.count("exit=2") == len(refused), report
    assert report.count("is for the team lead; it was run from the shell of teammate w") == \
        len(refused), report
    assert report.count("exit=0") == len(allowed), report
    assert read_state(team, "w2") is None  # its process was never started
    assert not (paths.home() / "teams" / "other").exists()
    assert not (crew.workdir / "report.html").exists()
    assert [t.subject for t in crew.team.tasks.list()] == ["a task of mine"]
    assert any(m.text == "from w" and m.sender == "w" for m in crew.lead_messages())
