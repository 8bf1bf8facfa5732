"""Permissions with real `swarm agent` processes: asking the lead, answers, rules, timeouts.

Teammates run the offline `shell` model (its commands go through the real Bash tool and the
permission check) or a `scripted:` model, started by `swarm.ops.member.spawner.spawn` on the hidden backend.
The lead answers through the real CLI in a subprocess.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from swarm.core.records.protocol import PermissionRequest
from swarm.ops.approvals import pending_permissions
from tests.support.agent_fixtures import Crew, error_lines
from tests.support.approval_helpers import REAL, mallory_script, only_as_said
from tests.support.helpers import wait_until

ECHO = "echo x > f.txt"


def pending(crew: Crew) -> list[dict[str, Any]]:
    """`swarm permissions list --json`, through the CLI."""
    proc = crew.cli("permissions", "list", "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def wait_request(crew: Crew, name: str, count: int = 1) -> dict[str, Any]:
    """The newest pending request from `name`, once `count` of them have ever been made."""
    def found() -> list[dict[str, Any]]:  # polled through the API: a CLI call per poll is slow
        mine = [p.as_dict() for p in pending_permissions(crew.team) if p.message.sender == name]
        return mine if len(asked(crew, name)) >= count and mine else []

    return wait_until(found, 15, message=f"a permission request from {name} "
                      f"(log: {crew.log(name)[-600:]})")[-1]


def asked(crew: Crew, name: str) -> list[PermissionRequest]:
    """Every permission request `name` ever sent (answered ones are in the archive)."""
    return [s for m in crew.lead_messages() if m.sender == name
            and isinstance(s := m.structured(), PermissionRequest)]


def tool_results(crew: Crew, name: str, tool: str | None = None) -> list[dict[str, Any]]:
    """The tool results in `name`'s transcript (of one tool only, when given), in order."""
    blocks = [b for e in crew.transcript(name) if e.get("kind") == "message"
              for b in e["message"]["content"] if isinstance(b, dict)]
    uses = {b["id"]: b["name"] for b in blocks if b.get("type") == "tool_use"}
    return [b for b in blocks if b.get("type") == "tool_result"
            and tool in (None, uses.get(b["tool_use_id"]))]


def shell(crew: Crew, name: str, prompt: str, **options: Any) -> None:
    options.setdefault("permission_mode", "default")
    crew.spawn(name, prompt=prompt, **options)


# -- default mode: ask, approve, deny ----------------------------------------------------------

def test_default_mode_asks_and_runs_only_after_approve(crew: Crew) -> None:
    target = crew.workdir / "f.txt"
    shell(crew, "w1", f"$ {ECHO}")
    request = wait_request(crew, "w1")
    assert request["tool_name"] == "Bash" and request["input"] == {"command": ECHO}
    assert request["agent_id"] == "w1@crew" and request["tool_use_id"].startswith("toolu_")
    assert ECHO in request["description"]
    # It waits: state waiting_permission, and the command has not run.
    assert crew.wait_state("w1", "waiting_permission").detail == f"asks: Bash: {ECHO}"
    assert not target.exists()
    human = crew.cli("permissions", "list")
    assert request["request_id"][:8] in human.stdout and "w1" in human.stdout

    proc = crew.cli("permissions", "approve", request["request_id"])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "approved Bash for w1"
    wait_until(target.exists, 10, message="f.txt after approve")
    assert target.read_text() == "x\n"
    crew.wait_idle_notes("w1", 1)
    assert pending(crew) == []
    assert tool_results(crew, "w1")[0]["content"] == "(no output)"

    # Answering it again, either way, or an id nobody asked: exit 2, one clear line.
    for args in (["approve", request["request_id"]], ["deny", request["request_id"], "-r", "no"],
                 ["approve", "0000dead"], ["approve", " "]):
        again = crew.cli("permissions", *args)
        assert again.returncode == 2, (args, again.stdout, again.stderr)
        assert error_lines(again)[0].startswith("swarm: error: no pending permission request")


def test_deny_never_runs_and_the_model_reads_the_reason(crew: Crew) -> None:
    target = crew.workdir / "f.txt"
    shell(crew, "w1", f"$ {ECHO}")
    request = wait_request(crew, "w1")
    # A reason is required (the model reads it): an empty one is refused and loses nothing.
    empty = crew.cli("permissions", "deny", request["request_id"], "--reason", " ")
    assert empty.returncode == 2 and "--reason is required" in empty.stderr
    assert [p["request_id"] for p in pending(crew)] == [request["request_id"]]

    proc = crew.cli("permissions", "deny", request["request_id"][:8],  # a unique prefix will do
                    "--reason", "no files in the repo root")
    assert proc.returncode == 0, proc.stderr
    crew.wait_idle_notes("w1", 1)
    assert not target.exists()
    result = tool_results(crew, "w1")[0]
    assert result["is_error"] is True
    assert result["content"] == "permission denied: the lead denied it: no files in the repo root"
    # The shell model reported what it saw to the lead.
    reports = [m.text for m in crew.lead_messages() if m.sender == "w1" and m.structured() is None]
    assert any("no files in the repo root" in r for r in reports)
    assert pending(crew) == []


def test_always_adds_a_team_rule_so_a_second_teammate_does_not_ask(crew: Crew) -> None:
    target = crew.workdir / "f.txt"
    shell(crew, "w1", f"$ {ECHO}")
    request = wait_request(crew, "w1")
    proc = crew.cli("permissions", "approve", request["request_id"], "--always")
    assert proc.returncode == 0 and "added a team rule" in proc.stdout, proc.stderr
    assert crew.team.config().allowed_rules == [f"Bash({ECHO})"]
    wait_until(target.exists, 10)
    crew.wait_idle_notes("w1", 1)

    target.unlink()
    shell(crew, "w2", f"$ {ECHO}")
    crew.wait_idle_notes("w2", 1)
    assert target.read_text() == "x\n"
    assert asked(crew, "w2") == []
    # The rule is exact: a different command still asks.
    crew.send("w2", "$ echo y > g.txt")
    other = wait_request(crew, "w2")
    assert other["input"] == {"command": "echo y > g.txt"}
    assert not (crew.workdir / "g.txt").exists()


def test_input_replaces_the_tool_input_and_bad_input_is_refused(crew: Crew) -> None:
    shell(crew, "w1", f"$ {ECHO}")
    request = wait_request(crew, "w1")
    rid = request["request_id"]
    bad = {"not json": "not valid JSON", "[1, 2]": "must be a JSON object",
           "{}": "--input: Invalid input for Bash: command: Field required",
           '{"command": 5}': "command: Input should be a valid string",
           '{"command": "ls", "bogus": 1}': "bogus: Extra inputs are not permitted",
           '{"command": "ls", "timeout": true}': "timeout: Input should be a valid number"}
    for raw, why in bad.items():
        proc = crew.cli("permissions", "approve", rid, "--input", raw)
        assert proc.returncode == 2, (raw, proc.stdout)
        assert why in proc.stderr, (raw, proc.stderr)
    # Refused answers lose nothing: the request is still pending and nothing ran.
    assert [p["request_id"] for p in pending(crew)] == [rid]
    assert crew.team.config().allowed_rules == []

    proc = crew.cli("permissions", "approve", rid, "--input",
                    json.dumps({"command": "echo replaced > g.txt"}))
    assert proc.returncode == 0, proc.stderr
    crew.wait_idle_notes("w1", 1)
    assert (crew.workdir / "g.txt").read_text() == "replaced\n"
    assert not (crew.workdir / "f.txt").exists()
    # The model (and the transcript) see what really ran, and that it was edited.
    (result,) = tool_results(crew, "w1", "Bash")
    assert result["content"].startswith("[the lead edited this call's input before approving it;"
                                        " it ran as: Bash: echo replaced > g.txt]")


# -- deny rules ------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["default", "acceptEdits", "bypassPermissions"])
def test_deny_rule_is_never_asked_and_never_runs(crew: Crew, mode: str) -> None:
    victims = [crew.workdir / f"victim{i}.txt" for i in range(2)]
    for victim in victims:
        victim.write_text("keep me")
    # The second command hides rm behind another one: still denied by the rule.
    prompt = "```sh\nrm victim0.txt\n```\n```sh\ntrue && rm -f victim1.txt\n```"
    shell(crew, "w1", prompt, permission_mode=mode, deny=("Bash(rm:*)",))
    crew.wait_idle_notes("w1", 1)
    assert all(v.read_text() == "keep me" for v in victims)
    assert asked(crew, "w1") == []
    results = tool_results(crew, "w1", "Bash")
    assert [r["content"] for r in results] == ["permission denied: denied by rule Bash(rm:*)"] * 2
    assert crew.team.member("w1").permission_mode == mode


# -- acceptEdits: the working directory --------------------------------------------------------

def test_accept_edits_writes_inside_freely_and_asks_outside(crew: Crew, tmp_path: Path) -> None:
    project = crew.workdir / "proj"
    project.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (project / "escape").symlink_to(outside)
    writes = [("in.txt", project / "in.txt"), ("sub/deep.txt", project / "sub" / "deep.txt"),
              ("../up.txt", crew.workdir / "up.txt"), ("escape/link.txt", outside / "link.txt"),
              (str(outside / "abs.txt"), outside / "abs.txt")]
    script = tmp_path / "script.json"
    script.write_text(json.dumps([
        {"text": "writing", "tool_uses": [{"name": "Write", "input": {"file_path": p,
                                                                      "content": p}}
                                          for p, _ in writes]},
        {"text": "done"},
    ]))
    crew.spawn("ed", prompt="go", model=f"scripted:{script}", permission_mode="acceptEdits",
               cwd=str(project))

    # Inside the cwd: written without asking. Then the three outside paths ask one by one.
    first = wait_request(crew, "ed", 1)
    assert (project / "in.txt").read_text() == "in.txt"
    assert (project / "sub" / "deep.txt").exists()
    assert first["input"]["file_path"] == "../up.txt"
    assert crew.cli("permissions", "deny", first["request_id"], "-r", "stay inside").returncode == 0
    second = wait_request(crew, "ed", 2)
    assert second["input"]["file_path"] == "escape/link.txt"
    assert crew.cli("permissions", "deny", second["request_id"], "-r", "no").returncode == 0
    third = wait_request(crew, "ed", 3)
    assert third["input"]["file_path"] == str(outside / "abs.txt")
    assert crew.cli("permissions", "approve", third["request_id"]).returncode == 0
    crew.wait_idle_notes("ed", 1)

    assert [r.input["file_path"] for r in asked(crew, "ed")] == [p for p, _ in writes[2:]]
    assert not (crew.workdir / "up.txt").exists() and not (outside / "link.txt").exists()
    assert (outside / "abs.txt").read_text() == str(outside / "abs.txt")
    contents = [r["content"] for r in tool_results(crew, "ed", "Write")]
    assert contents[2] == "permission denied: the lead denied it: stay inside"
    assert len(contents) == 5 and sum("permission denied" in c for c in contents) == 2


# -- timeout and shutdown while waiting --------------------------------------------------------

def test_timeout_denies_with_a_reason_the_model_sees(crew: Crew,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_PERMISSION_TIMEOUT", "0.5")  # the spawned agent inherits it
    shell(crew, "w1", f"$ {ECHO}")
    crew.wait_idle_notes("w1", 1)
    assert len(asked(crew, "w1")) == 1
    assert not (crew.workdir / "f.txt").exists()
    result = tool_results(crew, "w1")[0]
    assert result["is_error"] is True
    assert result["content"].startswith("permission denied: no answer from the lead within 0.5s")
    # The request is over: it is no longer pending, and a late answer is refused.
    assert pending(crew) == []
    late = crew.cli("permissions", "approve", asked(crew, "w1")[0].request_id)
    assert late.returncode == 2
    assert not (crew.workdir / "f.txt").exists()


def test_shutdown_is_honoured_while_waiting_for_permission(crew: Crew) -> None:
    shell(crew, "w1", f"$ {ECHO}")
    wait_request(crew, "w1")
    crew.wait_state("w1", "waiting_permission")
    proc = crew.cli("shutdown", "w1", "--timeout", "15")
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert crew.exit_code("w1") == 0
    assert crew.state("w1").state == "exited"  # type: ignore[union-attr]
    assert not (crew.workdir / "f.txt").exists()
    assert "shutdown was requested" in tool_results(crew, "w1")[0]["content"]
    assert pending(crew) == []


def test_interrupt_abandons_the_wait_and_withdraws_the_request(crew: Crew) -> None:
    shell(crew, "w1", f"$ {ECHO}")
    request = wait_request(crew, "w1")
    crew.wait_state("w1", "waiting_permission")
    assert crew.cli("interrupt", "w1").returncode == 0
    notes = crew.wait_idle_notes("w1", 1)
    assert notes[0].idle_reason == "interrupted"
    assert pending(crew) == []
    assert crew.cli("permissions", "approve", request["request_id"]).returncode == 2
    assert not (crew.workdir / "f.txt").exists()
    # Still alive and still asking before it runs anything.
    crew.send("w1", f"$ {ECHO}")
    assert wait_request(crew, "w1", 2)["input"] == {"command": ECHO}
    assert not (crew.workdir / "f.txt").exists()


# -- waiting for a request, answering it by the teammate's name (the README's Quickstart) --------

def test_wait_until_asking_then_approve_by_the_teammates_name(crew: Crew) -> None:
    target = crew.workdir / "f.txt"
    shell(crew, "w1", f"$ {ECHO}")
    proc = crew.cli("wait", "--until", "asking", "--timeout", "30", "--json")
    assert proc.returncode == 0, proc.stderr
    assert [(s["name"], s["state"]) for s in json.loads(proc.stdout)] == [
        ("w1", "waiting_permission")]
    assert pending(crew)[0]["from"] == "w1" and not target.exists()
    proc = crew.cli("permissions", "approve", "W1")  # names are case-insensitive
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "approved Bash for w1"
    wait_until(target.exists, 10, message="f.txt after approve")
    again = crew.cli("permissions", "approve", "w1")  # answered: nothing of w1's is pending
    assert again.returncode == 2 and error_lines(again) == [
        "swarm: error: no pending permission request 'w1' (unknown or already answered); see"
        " `swarm permissions list`"]


def test_wait_until_asking_times_out_when_nobody_asks(crew: Crew) -> None:
    shell(crew, "w1", "$ true", permission_mode="bypassPermissions")
    crew.wait_state("w1", "idle")
    proc = crew.cli("wait", "--until", "asking", "--timeout", "1")
    assert proc.returncode == 124
    assert error_lines(proc) == ["swarm: error: timed out after 1s waiting for asking"]


def test_every_shell_view_shows_the_real_input_and_always_prints_its_rule(
        crew: Crew, tmp_path: Path) -> None:
    (crew.workdir / "victimdir").mkdir()
    crew.spawn("mallory", prompt="go", permission_mode="default",
               model=mallory_script(tmp_path / "mallory.json", crew.team.name))
    (pending,) = wait_until(lambda: pending_permissions(crew.team), 15,
                            message=f"mallory's request ({crew.log('mallory')[-400:]})")
    rid = pending.request.request_id

    listed = crew.cli("permissions", "list")
    assert listed.returncode == 0, listed.stderr
    only_as_said(listed.stdout)
    (as_json,) = json.loads(crew.cli("permissions", "list", "--json").stdout)
    assert as_json["what"] == f"Bash: {REAL}"
    inbox = crew.cli("inbox")
    assert inbox.returncode == 0, inbox.stderr
    only_as_said(inbox.stdout)

    approved = crew.cli("permissions", "approve", rid[:8], "--always")
    assert approved.returncode == 0, approved.stderr
    assert approved.stdout.splitlines() == [
        f"adding team rule: Bash({REAL})",
        "approved Bash for mallory (and added a team rule)"]
    assert crew.team.config().allowed_rules == [f"Bash({REAL})"]
    assert (crew.workdir / "victimdir").is_dir()  # mallory never asked to run it for real

