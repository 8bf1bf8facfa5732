"""The foundation commands: `swarm team ...`, `swarm send`, `swarm inbox`, `swarm tasks ...`.

The cases run `swarm.cli.main.main` in-process (the real error handling, fast); the installed
`swarm` executable's real stderr format and exit codes end to end: tests/system/cli/test_main.py
and tests/system/cli/test_main_executable.py.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from swarm.cli.main import cli, main
from swarm.core.records.protocol import PermissionRequest
from swarm.core.store import paths
from swarm.core.team.team import Team

ROOT = Path(__file__).resolve().parents[3]
SWARM_EXE = Path(sys.executable).parent / "swarm"


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)

    def error_lines(self) -> list[str]:
        return [line for line in self.err.splitlines() if line.startswith("swarm: error:")]


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Any:
    """Run the CLI in-process through `main` (which maps errors to lines and exit codes)."""

    def invoke(*args: str, stdin: str | None = None) -> Result:
        capsys.readouterr()
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        try:
            main(list(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        else:  # pragma: no cover - main always exits
            code = 0
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return invoke


def run_exe(*args: str, stdin: str | None = None, env: dict[str, str] | None = None) -> Result:
    """Run the installed `swarm` executable as a real process."""
    proc = subprocess.run(
        [str(SWARM_EXE), *args], input=stdin, capture_output=True, text=True, timeout=60,
        env={**os.environ, **(env or {})}, cwd=ROOT,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def assert_one_error(result: Result, code: int, *needles: str) -> None:
    assert result.code == code, result
    lines = result.err.strip().splitlines()
    errors = result.error_lines()
    assert len(errors) == 1, result.err
    assert lines[-1] == errors[0]
    assert "Traceback" not in result.err
    for needle in needles:
        assert needle in errors[0], errors[0]


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(["sleep", "30"])
    reaper = threading.Thread(target=proc.wait, daemon=True)  # reap at once: no zombie
    reaper.start()
    yield proc
    if proc.poll() is None:
        proc.kill()
    reaper.join(10)


# -- names ----------------------------------------------------------------------------------------
BAD_NAMES = ["../x", "a/b", "", "a b", "a@b", "a\x1bb", "a\nb", "a\x00b", "a" * 100, "-a"]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_team_create_rejects_bad_names(run: Any, name: str) -> None:
    result = run("team", "create", "--", name)
    assert_one_error(result, 2, "team name")
    assert not paths.teams_dir().exists() or list(paths.teams_dir().iterdir()) == []


@pytest.mark.parametrize("name", BAD_NAMES)
def test_agent_names_are_checked_everywhere(run: Any, team: Team, name: str) -> None:
    before = sorted(p.name for p in paths.inboxes_dir(team.name).iterdir())
    team.tasks.add("t")
    assert_one_error(run("send", "--team", "alpha", "--", name, "hi"), 2)
    assert_one_error(run("send", "--team", "alpha", "--from", name, "alice", "hi"), 2)
    assert_one_error(run("inbox", "--team", "alpha", "--", name), 2)
    assert_one_error(run("tasks", "claim", "1", "--team", "alpha", "--as", name), 2)
    assert sorted(p.name for p in paths.inboxes_dir(team.name).iterdir()) == before
    assert team.tasks.get("1").owner is None


@pytest.mark.parametrize("name", ["user", "system", "USER"])
def test_reserved_names_are_not_members(run: Any, team: Team, name: str) -> None:
    assert_one_error(run("send", "--team", "alpha", name, "hi"), 2, "not a member")
    assert_one_error(run("send", "--team", "alpha", "alice", "hi", "--from", name), 2)
    assert sorted(p.name for p in paths.inboxes_dir("alpha").iterdir()) == []


def test_upper_case_names_are_lower_cased(run: Any) -> None:
    result = run("team", "create", "Alpha", "--json")
    assert result.code == 0 and result.json()["name"] == "alpha"
    Team.open("alpha").add_member("Alice")
    assert run("send", "--team", "ALPHA", "ALICE", "hi").code == 0
    assert [m.text for m in Team.open("alpha").inbox("alice").messages()] == ["hi"]


# -- team ---------------------------------------------------------------------------------------
def test_team_create_list_show_delete(run: Any) -> None:
    made = run("team", "create", "alpha", "--description", "the A team")
    assert made.code == 0
    assert made.out == "alpha\n"  # only the name on stdout: `$(swarm team create alpha)`
    assert "created team alpha" in made.err and "lead: team-lead@alpha" in made.err
    clash = run("team", "create", "alpha", "--json")
    other = clash.json()["name"]
    assert other.startswith("alpha-") and clash.json()["lead_agent_id"] == f"team-lead@{other}"
    human = run("team", "create", "alpha")
    third = human.out.strip()
    assert human.out == f"{third}\n" and third.startswith("alpha-") and third != other
    assert f"created team {third} ('alpha' was taken)" in human.err

    listed = run("team", "list", "--json")
    assert listed.code == 0
    assert [t["name"] for t in listed.json()][0] == "alpha" and len(listed.json()) == 3
    assert "the A team" in run("team", "list").out

    shown = run("team", "show", "alpha", "--json").json()
    assert shown["description"] == "the A team"
    assert [m["name"] for m in shown["members"]] == ["team-lead"]
    assert "lead: team-lead@alpha" in run("team", "show", "alpha").out

    gone = run("team", "delete", "alpha", "--json")
    assert gone.code == 0 and gone.json() == {"deleted": "alpha", "stopped": [], "worktrees": []}
    assert not paths.team_dir("alpha").exists()
    assert_one_error(run("team", "show", "alpha"), 2, "no team named 'alpha'")
    assert_one_error(run("team", "delete", "alpha"), 2)


def test_team_list_when_empty(run: Any) -> None:
    assert run("team", "list", "--json").json() == []
    assert "no teams" in run("team", "list").out


def test_team_show_defaults_to_swarm_team(
    run: Any, team: Team, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert_one_error(run("team", "show"), 2, "SWARM_TEAM")
    monkeypatch.setenv("SWARM_TEAM", "alpha")
    shown = run("team", "show", "--json").json()
    assert [m["name"] for m in shown["members"]] == ["team-lead", "alice", "bob"]
    # An explicit empty name is an error, not a silent fall-back to $SWARM_TEAM.
    assert_one_error(run("team", "show", ""), 2, "empty")
    assert_one_error(run("send", "--team", "", "alice", "hi"), 2, "empty")
    assert team.inbox("alice").messages() == []


def test_team_list_goes_on_past_a_corrupt_team(run: Any) -> None:
    Team.create("alpha")
    Team.create("beta")
    paths.team_config("alpha").write_text("{torn")
    result = run("team", "list", "--json")
    assert result.code == 0, result
    assert [t["name"] for t in result.json()] == ["beta"]
    assert "swarm: warning:" in result.err and "Traceback" not in result.err


# -- send / inbox ---------------------------------------------------------------------------------
def test_send_and_inbox(run: Any, team: Team) -> None:
    sent = run("send", "--team", "alpha", "alice", "build the thing", "--summary", "build")
    assert sent.code == 0 and "sent to alice (1 message(s))" in sent.out
    as_json = run("send", "--team", "alpha", "alice", "second", "--json").json()
    assert as_json["to"] == "alice" and len(as_json["ids"]) == 1

    listed = run("inbox", "alice", "--team", "alpha", "--json").json()
    assert [m["text"] for m in listed] == ["build the thing", "second"]
    assert listed[0]["from"] == "team-lead" and listed[0]["summary"] == "build"
    assert listed[1]["id"] == as_json["ids"][0]
    human = run("inbox", "alice", "--team", "alpha").out
    assert "team-lead" in human and "build" in human

    team.inbox("alice").mark_read([listed[0]["id"]])
    unread = run("inbox", "alice", "--team", "alpha", "--unread", "--json").json()
    assert [m["text"] for m in unread] == ["second"]
    everything = run("inbox", "alice", "--team", "alpha", "--all", "--json").json()
    assert [m["text"] for m in everything] == ["build the thing", "second"]
    assert [m["read"] for m in everything] == [True, False]
    # Reading through the CLI does not mark anything read.
    assert [m.text for m in team.inbox("alice").unread()] == ["second"]


def test_inbox_defaults_to_the_lead(run: Any, team: Team, monkeypatch: pytest.MonkeyPatch) -> None:
    team.send("team-lead", "report", sender="bob")
    monkeypatch.setenv("SWARM_TEAM", "alpha")
    listed = run("inbox", "--json").json()
    assert [(m["from"], m["text"]) for m in listed] == [("bob", "report")]
    assert "(no messages)" in run("inbox", "alice").out


def test_send_from_stdin_and_from_option(run: Any, team: Team) -> None:
    result = run("send", "--team", "alpha", "alice", "-", "--from", "bob",
                 stdin="line one\nline two\n")
    assert result.code == 0
    [message] = team.inbox("alice").messages()
    assert message.text == "line one\nline two\n" and message.sender == "bob"
    assert message.summary == "line one"


def test_swarm_agent_id_sets_the_sender(
    run: Any, team: Team, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SWARM_AGENT_ID", "bob@alpha")
    monkeypatch.setenv("SWARM_TEAM", "alpha")
    assert run("send", "alice", "from bob's shell").code == 0
    # A teammate cannot speak as the lead (or anyone else): --from is lead-only.
    forged = run("send", "alice", "explicit", "--from", "team-lead")
    assert forged.code == 2 and "is for the team lead" in forged.err
    senders = [(m.sender, m.text) for m in team.inbox("alice").messages()]
    assert senders == [("bob", "from bob's shell")]


def test_broadcast(run: Any, team: Team) -> None:
    result = run("send", "--team", "alpha", "*", "all hands", "--from", "alice", "--json")
    assert len(result.json()["ids"]) == 2
    assert team.inbox("alice").messages() == []
    assert [m.text for m in team.inbox("bob").messages()] == ["all hands"]
    assert [m.text for m in team.inbox("team-lead").messages()] == ["all hands"]


def test_send_errors(run: Any, team: Team) -> None:
    boxes = lambda: sorted(p.name for p in paths.inboxes_dir("alpha").iterdir())  # noqa: E731
    assert_one_error(run("send", "--team", "alpha", "carol", "hi"), 2, "not a member")
    assert_one_error(run("send", "--team", "alpha", "alice", "hi", "--from", "carol"), 2)
    shutdown = json.dumps({"type": "shutdown_request", "reason": "bye"})
    assert_one_error(run("send", "--team", "alpha", "*", shutdown), 2, "broadcast")
    response = json.dumps({"type": "shutdown_response", "request_id": "r", "approve": True})
    assert_one_error(run("send", "--team", "alpha", "bob", response, "--from", "alice"), 2,
                     "team-lead")
    refusal = json.dumps({"type": "shutdown_response", "request_id": "r", "approve": False})
    assert_one_error(run("send", "--team", "alpha", "team-lead", refusal, "--from", "alice"), 2,
                     "reason")
    assert_one_error(run("send", "--team", "ghost", "alice", "hi"), 2, "no team named")
    assert_one_error(run("send", "alice", "hi"), 2, "SWARM_TEAM")
    assert_one_error(run("send", "--team", "alpha", "alice"), 2)  # usage: missing MESSAGE
    assert boxes() == []


def test_corrupt_mailbox_via_cli_goes_on(run: Any, team: Team) -> None:
    paths.inbox("alpha", "alice").write_text('[{"id": "1", "fr\n')
    result = run("inbox", "alice", "--team", "alpha")
    assert result.code == 0 and "(no messages)" in result.out
    assert result.err.startswith("swarm: warning:") and "Traceback" not in result.err
    assert run("send", "--team", "alpha", "alice", "fresh").code == 0
    assert [m.text for m in team.inbox("alice").messages()] == ["fresh"]
    assert len(list(paths.inboxes_dir("alpha").glob("alice.jsonl.corrupt-*"))) == 1


# -- tasks --------------------------------------------------------------------------------------
def test_tasks_commands(run: Any, team: Team) -> None:
    added = run("tasks", "add", "design", "--team", "alpha", "--description", "d", "--json")
    assert added.code == 0 and added.json()["id"] == "1"
    second = run("tasks", "add", "build", "--team", "alpha", "--blocked-by", "1", "--json")
    assert second.json()["blocked_by"] == ["1"]
    assert "added task #3" in run("tasks", "add", "ship", "--team", "alpha", "--owner", "bob").out

    listed = run("tasks", "list", "--team", "alpha", "--json").json()
    assert [(t["id"], t["status"], t["owner"]) for t in listed] == [
        ("1", "pending", None), ("2", "pending", None), ("3", "pending", "bob")]
    assert "BLOCKED BY" in run("tasks", "list", "--team", "alpha").out
    shown = run("tasks", "show", "1", "--team", "alpha", "--json").json()
    assert shown["blocks"] == ["2"] and shown["description"] == "d"
    assert "blocks: #2" in run("tasks", "show", "1", "--team", "alpha").out

    blocked = run("tasks", "claim", "2", "--as", "alice", "--team", "alpha")
    assert_one_error(blocked, 1, "blocked")
    blocked_update = run("tasks", "update", "2", "--status", "in_progress", "--team", "alpha")
    assert_one_error(blocked_update, 1, "blocked")

    claimed = run("tasks", "claim", "1", "--as", "alice", "--team", "alpha", "--json").json()
    assert claimed["owner"] == "alice" and claimed["status"] == "in_progress"
    assert_one_error(run("tasks", "claim", "1", "--as", "bob", "--team", "alpha"), 1,
                     "already owned by alice")
    done = run("tasks", "update", "1", "--status", "completed", "--result", "ok",
               "--team", "alpha", "--json").json()
    assert done["status"] == "completed" and done["result"] == "ok"
    assert_one_error(run("tasks", "claim", "1", "--as", "bob", "--team", "alpha"), 1,
                     "already completed")

    assert "bob claimed task #2" in run("tasks", "claim", "2", "--as", "bob", "--team", "alpha").out
    released = run("tasks", "release", "2", "--team", "alpha", "--json").json()
    assert released["owner"] is None and released["status"] == "pending"
    cleared = run("tasks", "update", "3", "--owner", "", "--team", "alpha", "--json").json()
    assert cleared["owner"] is None

    assert_one_error(run("tasks", "show", "9", "--team", "alpha"), 2, "no task '9'")
    assert_one_error(run("tasks", "update", "1", "--status", "done", "--team", "alpha"), 2)
    assert_one_error(run("tasks", "add", "x", "--blocked-by", "9", "--team", "alpha"), 2)
    assert_one_error(run("tasks", "claim", "3", "--as", "carol", "--team", "alpha"), 2)
    assert [t.id for t in team.tasks.list()] == ["1", "2", "3"]


def test_corrupt_task_file_via_cli_goes_on(run: Any, team: Team) -> None:
    team.tasks.add("a")
    team.tasks.add("b")
    paths.task_file("alpha", "1").write_text("{torn")
    result = run("tasks", "list", "--team", "alpha", "--json")
    assert result.code == 0 and [t["id"] for t in result.json()] == ["2"]
    assert "swarm: warning:" in result.err and "1.json" in result.err
    assert run("tasks", "add", "c", "--team", "alpha", "--json").json()["id"] == "3"


# -- general --------------------------------------------------------------------------------------
def test_usage_errors_are_exit_2_one_line(run: Any) -> None:
    assert_one_error(run("no-such-command"), 2)
    assert_one_error(run("team", "create"), 2)
    assert_one_error(run("tasks", "claim", "1"), 2, "--as")


def test_cli_runner_against_the_click_group(team: Team) -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["team", "list", "--json"])
    assert result.exit_code == 0
    assert [t["name"] for t in json.loads(result.stdout)] == ["alpha"]
    result = runner.invoke(cli, ["send", "--team", "alpha", "bob", "-"], input="via runner")
    assert result.exit_code == 0
    assert [m.text for m in team.inbox("bob").messages()] == ["via runner"]


def test_inbox_mark_read_archives_what_it_showed_but_pending_requests(run: Any, team: Team) -> None:
    """The lead's mailbox must not grow without bound: `--mark-read` moves what was shown to
    the archive; permission requests stay until `swarm permissions` answers them; someone
    else's mailbox is refused (it would take their messages)."""
    from swarm.core.records.protocol import PermissionRequest

    team.send("team-lead", "report", sender="bob")
    team.send("team-lead", PermissionRequest(agent_id="bob@alpha", tool_name="Bash",
                                             input={"command": "ls"}), sender="bob")
    team.send("alice", "for alice", sender="bob")
    shown = run("inbox", "--team", "alpha", "--mark-read", "--json").json()
    assert len(shown) == 2
    box = team.inbox("team-lead")
    [left] = box.unread()
    assert isinstance(left.structured(), PermissionRequest)
    assert [m.text for m in box.archived()] == ["report"]
    refused = run("inbox", "alice", "--team", "alpha", "--mark-read")
    assert refused.code == 2 and "your own mailbox" in refused.err
    assert len(team.inbox("alice").unread()) == 1


def test_the_variables_page_lists_every_environment_variable_swarm_reads() -> None:
    """settings.VARIABLES is the one list; docs/guide/variables.md's table shows exactly it,
    row by row (name, default, meaning)."""
    from swarm.settings import VARIABLES

    page = (Path(__file__).resolve().parents[3] / "docs" / "guide" / "variables.md").read_text()
    table = [line for line in page.splitlines() if line.startswith("| `")]
    assert table == [f"| `{v.name}` | {v.default or '(unset)'} | {v.meaning} |" for v in VARIABLES]
    for path in Path(__file__).resolve().parents[3].joinpath("swarm").rglob("*.py"):
        # The pane backends (top-level `backends` until they moved under swarm/) compare a
        # child's whole environment with this one's: no variable read by name.
        if path.name != "settings.py" and "backends" not in path.parts:
            text = path.read_text()
            assert "os.environ.get(" not in text and "os.getenv(" not in text, path


def test_a_request_by_name_must_be_the_teammates_only_one(run: Any, team: Team) -> None:
    for command in ("echo one", "echo two"):
        team.send("team-lead", PermissionRequest(agent_id="bob@alpha", tool_name="Bash",
                                                 input={"command": command}), sender="bob")
    assert_one_error(run("permissions", "approve", "bob", "--team", "alpha"), 2,
                     "bob has 2 pending requests: give the request id")
    assert_one_error(run("permissions", "deny", "alice", "-r", "no", "--team", "alpha"), 2,
                     "no pending permission request 'alice'")
    assert len(team.inbox("team-lead").unread()) == 2  # nothing was answered
