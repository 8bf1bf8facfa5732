"""Record and replay: `--record DIR` keeps every model request and reply per
member; `swarm replay DIR` reruns the team offline from them and reports where it diverged.

Real processes: a headless `swarm lead` whose model is the fake Messages API
(tests/support/fake_anthropic.py), `shell` teammates as real `swarm agent` processes; the replay runs
with the fake server stopped."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from swarm.core.team.team import Team
from swarm.ops.demo import WORKERS
from swarm.ops.mail.messages import team_messages
from tests.support.cli_runner import SWARM, run_swarm
from tests.support.fake_anthropic import FakeAnthropic, Scripted, last_user_text, reply
from tests.support.helpers import wait_until
from tests.support.lead_fixtures import lead

pytestmark = pytest.mark.usefixtures("lead_env")

BYPASS = ("--permission-mode", "bypassPermissions")
FINAL = "Both tasks are done."


def one_teammate(body: dict[str, Any]) -> Scripted:
    """The lead: two tasks for one shell teammate (owned, so nothing races), shut it down when
    the team is quiet, then the final answer. Decided by the request alone, so a request the
    SDK retries gets the same reply (a stage kept across calls would move on twice)."""
    messages = body.get("messages") or []
    if len(messages) == 1:
        return reply("Two tasks for alice.", [
            ("TaskCreate", {"subject": "one", "description": "$ echo one"}),
            ("TaskCreate", {"subject": "two", "description": "$ echo two"}),
            ("TaskUpdate", {"task_id": "1", "owner": "alice"}),
            ("TaskUpdate", {"task_id": "2", "owner": "alice"}),
            ("SpawnTeammate", {"name": "alice", "prompt": "Do your tasks.\n$ echo ready",
                               "permission_mode": "bypassPermissions"})])
    if "<team-quiet>" in last_user_text(body):
        return reply(None, [("SendMessage", {"to": "alice", "message": {
            "type": "shutdown_request", "reason": "the work is done"}})])
    if "sent shutdown_request to alice" in json.dumps(messages[-1]):  # that call's result
        return reply(FINAL)
    return reply("Noted.")


def team_record(team: str) -> dict[str, Any]:
    """The team's messages and tasks without ids and times (what a replay must reproduce)."""
    t = Team.open(team)

    def clean(text: str) -> str:
        text = text.replace(team, "<team>")
        text = re.sub(r"\b[0-9a-f-]{36}\b|\b[0-9a-f]{8,}\b|toolu_\w+", "<id>", text)
        return re.sub(r"\d+(\.\d+)?s\b", "<n>s", text)

    messages = sorted((a.to, a.message.sender, clean(a.message.text)) for a in team_messages(t))
    tasks = [(x.id, x.subject, x.status, x.owner, clean(x.result or ""))
             for x in t.tasks.list()]
    return {"messages": messages, "tasks": tasks}


def replay(directory: Path, *args: str, cwd: Path,
           env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run_swarm("replay", str(directory), *args, cwd=cwd, timeout=120, env=env)


def record_lead(fake_api: FakeAnthropic, tmp_path: Path) -> Path:
    fake_api.fallback = one_teammate
    directory = tmp_path / "rec"
    proc = lead(*BYPASS, "--keep", "--team", "rec", "--record", str(directory),
                "Echo one and two.", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == FINAL, lead_inputs(directory)
    return directory


def lead_inputs(directory: Path) -> str:
    """What woke the recorded lead, call by call (a failure's evidence)."""
    path = directory / "team-lead.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    return "\n".join(json.dumps(json.loads(x)["request"]["messages"][-1]["content"])[:600]
                     for x in lines)


def test_a_recorded_lead_job_replays_offline_with_the_same_messages_and_tasks(
        fake_api: FakeAnthropic, tmp_path: Path, swarm_home: Path) -> None:
    directory = record_lead(fake_api, tmp_path)
    recorded = team_record("rec")
    assert [t[2] for t in recorded["tasks"]] == ["completed", "completed"]
    # One file per member, private, holding no credential.
    for name in ("team-lead", "alice"):
        path = directory / f"{name}.jsonl"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert "test-key" not in path.read_text()
    lines = [json.loads(x) for x in (directory / "team-lead.jsonl").read_text().splitlines()]
    assert len(lines) == len(fake_api.messages_requests())
    assert lines[0]["request"]["messages"][0]["content"][0]["text"] == "Echo one and two."
    assert lines[0]["reply"]["content"][1]["name"] == "TaskCreate"
    calls = len(fake_api.messages_requests())
    fake_api.close()  # offline from here: a replay never calls a provider

    proc = replay(directory, "--team", "again", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["diverged"] == []
    members = {m["member"]: m for m in report["members"]}
    assert members["team-lead"]["recorded"] == calls
    assert members["alice"]["recorded"] >= 3
    # Under load a member may wake at another moment (two messages read at once, say): that
    # is reported as timing and not counted; every other request matches its recording.
    for member in members.values():
        if member["timing"]:
            assert member["request"] == member["matched"] + 1, member
        else:
            assert member["matched"] == member["recorded"], member
    assert {t["member"] for t in report["timing"]} == {
        name for name, m in members.items() if m["timing"]}
    again = team_record("again")
    assert again["tasks"] == recorded["tasks"]
    assert set(again["messages"]) ^ set(recorded["messages"]) == set()
    assert again["messages"] == recorded["messages"]

    text = replay(directory, "--team", "third", cwd=tmp_path)
    assert text.returncode == 0, text.stdout + text.stderr
    assert "no divergence" in text.stdout and "team-lead" in text.stdout


def test_a_changed_prompt_is_reported_as_the_divergence(
        fake_api: FakeAnthropic, tmp_path: Path, swarm_home: Path) -> None:
    directory = record_lead(fake_api, tmp_path)
    fake_api.close()
    proc = replay(directory, "--team", "changed", "--prompt", "Echo one, two and three.",
                  "--json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    (first,) = [d for d in report["diverged"] if d["member"] == "team-lead"]
    assert first["request"] == 1 and first["what"].startswith("message 1")
    assert "Echo one, two and three." in first["now"] and "Echo one and two." in first["recorded"]
    # The run still ends with the recorded answers: the team did the same work.
    assert [t[2] for t in team_record("changed")["tasks"]] == ["completed", "completed"]
    text = replay(directory, "--team", "changed2", "--prompt", "Other words.", cwd=tmp_path)
    assert text.returncode == 1
    assert "team-lead: diverged at request 1: message 1" in text.stdout


def test_a_changed_agent_definition_diverges_at_that_teammate(
        fake_api: FakeAnthropic, tmp_path: Path, swarm_home: Path) -> None:
    agents = swarm_home / "agents"
    agents.mkdir(parents=True)
    definition = agents / "echoer.md"
    definition.write_text("---\nname: echoer\ndescription: echoes\n---\nYou echo things.\n")
    directory = tmp_path / "rec"
    proc = subprocess.run([SWARM, "team", "create", "solo"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    proc = subprocess.run(
        [SWARM, "spawn", "bob", "--team", "solo", "--model", "shell", "--agent-type", "echoer",
         "--backend", "hidden", "--permission-mode", "bypassPermissions", "--record",
         str(directory), "--prompt", "$ echo hello"], capture_output=True, text=True,
        cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    path = directory / "bob.jsonl"
    wait_until(lambda: path.exists() and len(path.read_text().splitlines()) >= 2, timeout=30)
    done = subprocess.run([SWARM, "wait", "--team", "solo", "--until", "idle", "--timeout", "30"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr

    began = time.monotonic()
    same = replay(directory, "--team", "solo2", "--json", cwd=tmp_path)
    took = time.monotonic() - began
    assert same.returncode == 0, same.stdout + same.stderr
    report = json.loads(same.stdout)
    assert report["members"][0]["member"] == "bob"
    # Its teammate is stopped, not asked: a shutdown request past the recording's end has no
    # recorded answer, and asking waited 15 s for one on every replay of a spawn. The report's
    # seconds end when the members are read, just before the stop: what follows is the stop
    # (and the command's own start and exit), never the teammate's start and run, which take
    # longer than that on a busy machine.
    assert took - report["seconds"] < 12, (took, report["seconds"])
    assert "solo2" not in {t.name for t in Team.list()}

    definition.write_text("---\nname: echoer\ndescription: echoes\n---\nYou echo loudly.\n")
    changed = replay(directory, "--team", "solo3", "--json", cwd=tmp_path)
    assert changed.returncode == 1, changed.stdout + changed.stderr
    (first,) = json.loads(changed.stdout)["diverged"]
    assert (first["member"], first["request"], first["what"]) == ("bob", 1, "system prompt")
    assert "echo loudly" in first["now"] and "echo things" in first["recorded"]


def test_demo_records_and_replays(tmp_path: Path, swarm_home: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    directory = tmp_path / "rec"
    proc = subprocess.run([SWARM, "demo", "--backend", "hidden", "--record", str(directory)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.stem for p in directory.glob("*.jsonl")) == sorted(WORKERS)
    again = replay(directory, "--json", cwd=tmp_path)
    report = json.loads(again.stdout)
    assert sorted(m["member"] for m in report["members"]) == sorted(WORKERS)
    assert sum(m["matched"] for m in report["members"]) >= 3


def test_replay_of_a_directory_without_a_recording_is_a_clear_error(tmp_path: Path) -> None:
    proc = replay(tmp_path / "nothing", cwd=tmp_path)
    assert proc.returncode == 2
    (line,) = proc.stderr.splitlines()
    assert line.startswith("swarm: error: ") and "no recording" in line


def spawn_recorded(directory: Path, prompt: str, env: dict[str, str] | None = None,
                   team: str = "solo", cwd: Path | None = None) -> None:
    proc = subprocess.run([SWARM, "team", "create", team], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    proc = subprocess.run(
        [SWARM, "spawn", "bob", "--team", team, "--model", "shell", "--backend", "hidden",
         "--permission-mode", "bypassPermissions", "--record", str(directory), "--prompt",
         prompt], capture_output=True, text=True, env={**os.environ, **(env or {})},
        cwd=cwd or directory.parent)
    assert proc.returncode == 0, proc.stderr
    done = subprocess.run([SWARM, "wait", "--team", team, "--until", "idle", "--timeout", "30"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_a_secret_never_reaches_the_recording_and_the_replay_still_matches(
        tmp_path: Path) -> None:
    """A credential the teammate holds, pasted into its prompt: kept as ***, in its file and in
    run.json (the command line); the replay, without the credential, gets *** and matches."""
    secret = "sk-ant-live-0123456789abcdef"
    directory = tmp_path / "rec"
    spawn_recorded(directory, f"The key is {secret}.\n$ echo deploying",
                   {"ANTHROPIC_API_KEY": secret}, cwd=tmp_path)
    kept = (directory / "bob.jsonl").read_text()
    assert secret not in kept and "***" in kept
    assert secret not in (directory / "run.json").read_text()
    proc = replay(directory, "--team", "solo2", "--json", cwd=tmp_path,
                  env={"ANTHROPIC_API_KEY": ""})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (member,) = json.loads(proc.stdout)["members"]
    assert member["matched"] == member["recorded"] >= 2


def test_a_changed_tool_result_is_the_divergence(tmp_path: Path) -> None:
    """The teammate's command reads a file; the file changed before the replay."""
    (tmp_path / "input.txt").write_text("first\n")
    directory = tmp_path / "rec"
    spawn_recorded(directory, f"$ cat {tmp_path / 'input.txt'}")
    (tmp_path / "input.txt").write_text("second\n")
    proc = replay(directory, "--team", "solo2", "--json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (first,) = json.loads(proc.stdout)["diverged"]
    assert first["member"] == "bob" and first["what"].endswith("tool result")
    assert "first" in first["recorded"] and "second" in first["now"]


def test_record_into_a_directory_that_holds_a_recording_is_refused(tmp_path: Path) -> None:
    directory = tmp_path / "rec"
    spawn_recorded(directory, "$ echo one")
    before = (directory / "bob.jsonl").read_text()
    proc = subprocess.run(
        [SWARM, "spawn", "carol", "--team", "solo", "--model", "shell", "--backend", "hidden",
         "--record", str(directory), "--prompt", "$ echo two"], capture_output=True, text=True)
    assert proc.returncode == 2
    (line,) = proc.stderr.splitlines()
    assert line.startswith("swarm: error: ") and "already holds a recording" in line
    assert (directory / "bob.jsonl").read_text() == before
    assert Team.open("solo").config().member("carol") is None
    # --prompt belongs to a recorded lead: one line, no team made.
    teams = {t.name for t in Team.list()}
    bad = replay(directory, "--prompt", "other", cwd=tmp_path)
    assert bad.returncode == 2 and "--prompt replaces a recorded lead's prompt" in bad.stderr
    assert len(bad.stderr.splitlines()) == 1 and {t.name for t in Team.list()} == teams


def test_the_lead_waking_at_another_moment_is_timing_not_a_divergence() -> None:
    from swarm.runtime.models.replay_diff import first_difference

    def request(text: str) -> dict[str, object]:
        return {"system": "lead", "tools": [], "messages": [
            {"role": "user", "content": [{"type": "text", "text": "go"}]},
            {"role": "user", "content": [{"type": "text", "text": text}]}]}

    quiet = "<team-quiet>\nThe team is quiet: every teammate is idle.\n</team-quiet>"
    status = "<team-status>\nalice: working 3s\n</team-status>"
    woke = first_difference(request(quiet), "rec", request(status), "again")
    assert woke is not None and woke.timing and "timing" in woke.what
    two = ('<teammate-message from="a">x</teammate-message>', '<teammate-message from="b">y'
           '</teammate-message>')
    batched = first_difference(request(two[0] + two[1]), "rec", request(two[0]), "again")
    assert batched is not None and batched.timing
    # One more block of arrivals in an input (a tool result's turn that also brought a report).
    def blocks(*texts: str) -> dict[str, object]:
        return {"system": "lead", "tools": [], "messages": [{"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t", "content": "ok"},
            *({"type": "text", "text": t} for t in texts)]}]}

    more = first_difference(blocks(two[0], quiet), "rec", blocks(two[0]), "again")
    assert more is not None and more.timing and "number of blocks" in more.what
    other = first_difference(blocks("please also do C"), "rec", blocks(), "again")
    assert other is not None and not other.timing
    # A changed prompt is never timing, wherever the wake blocks stand.
    prompt = first_difference(request(status + "do A"), "rec", request(status + "do B"), "x")
    assert prompt is not None and not prompt.timing
