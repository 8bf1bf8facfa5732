"""Subagents end to end: a real `swarm agent --model sonnet` teammate whose `Agent` tool runs
subagents as threads, all talking through the real SDK to the fake Messages API."""

from __future__ import annotations

import json
import re
import subprocess
import threading
from pathlib import Path
from typing import Any

import psutil
import pytest

from swarm.core.records import base as records
from swarm.core.store import paths
from swarm.core.team.state import read_state
from tests.support.agent_fixtures import Crew
from tests.support.fake_anthropic import FakeAnthropic, Scripted
from tests.support.helpers import child_named, process_gone, wait_until, without_usage

WAIT = 30.0


@pytest.fixture(autouse=True)
def credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("SWARM_API_RETRY_BASE", "0.01")
    monkeypatch.setenv("HOME", str(tmp_path))
    for var in ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE", "ANTHROPIC_CONFIG_DIR",
                "SWARM_API_MAX_RETRIES"):
        monkeypatch.delenv(var, raising=False)


def is_typed_subagent(body: dict[str, Any]) -> bool:
    return "# You are a subagent" in body.get("system", [{}])[0].get("text", "")


def is_fork(body: dict[str, Any]) -> bool:
    return "<fork-rule>" in json.dumps(body["messages"])


def text_reply(text: str) -> Scripted:
    return Scripted(200, {"content": [{"type": "text", "text": text}], "stop_reason": "end_turn"})


def last_user(body: dict[str, Any]) -> list[dict[str, Any]]:
    message = body["messages"][-1]
    assert message["role"] == "user"
    return message["content"]  # type: ignore[no-any-return]


def plain(block: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in block.items() if k != "cache_control"}


def start(crew: Crew, prompt: str = "go") -> None:
    crew.spawn("w1", prompt=prompt, model="sonnet")


def subagent_records(crew: Crew) -> list[dict[str, Any]]:
    state = read_state(crew.team.name, "w1")
    assert state is not None
    return [records.to_dict(s) for s in state.subagents]


def test_foreground_explore_subagent_reports_to_the_next_request(
        crew: Crew, fake_api: FakeAnthropic) -> None:
    (crew.workdir / "notes.txt").write_text("alpha\nbeta\n")
    sub = fake_api.route(is_typed_subagent)
    read_id = sub.push_tool_use("Read", {"file_path": "notes.txt"})
    sub.push_text("Summary: notes.txt lists alpha and beta.")
    call = fake_api.push_tool_use("Agent", {
        "description": "summarize notes", "prompt": "Read notes.txt and summarize it.",
        "subagent_type": "explore"})
    fake_api.push_text("Thanks.")
    start(crew)
    crew.wait_idle_notes("w1", 1, timeout=WAIT)

    bodies = fake_api.messages_requests()
    subs = [b for b in bodies if is_typed_subagent(b)]
    parent = [b for b in bodies if not is_typed_subagent(b)]
    assert len(subs) == 2 and len(parent) == 2
    for body in subs:  # read-only tools only, never Agent
        assert [t["name"] for t in body["tools"]] == ["Read", "Glob", "Grep"]
    assert "Agent" in [t["name"] for t in parent[0]["tools"]]
    assert "`w1.sub-1`" in subs[0]["system"][0]["text"]
    assert [plain(b) for b in subs[0]["messages"][0]["content"]] == [
        {"type": "text", "text": "Read notes.txt and summarize it."}]
    (read,) = last_user(subs[1])
    assert read["tool_use_id"] == read_id and "alpha" in read["content"]

    (result,) = last_user(parent[1])
    assert result["tool_use_id"] == call and not result.get("is_error")
    report, stats = result["content"].rsplit("\n\n", 1)
    assert report == "Summary: notes.txt lists alpha and beta."
    figures = json.loads(stats)
    assert figures["agent_id"] == "w1.sub-1" and figures["tool_uses"] == 1
    assert figures["agent_type"] == "explore"
    assert figures["usage"] == {"input_tokens": 24, "output_tokens": 14,
                                "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}
    assert figures["tokens"] == 2 * (12 + 7) and figures["duration_ms"] >= 0

    # Records: its transcript, the parent's usage, status and `swarm transcript --subagent`.
    path = paths.subagent_transcript(crew.team.name, "w1", "w1.sub-1")
    kinds = [json.loads(line).get("event") or json.loads(line)["kind"]
             for line in path.read_text().splitlines()]
    assert kinds[0] == "started" and kinds[-1] == "ended" and kinds.count("message") == 4
    (row,) = json.loads(crew.cli("status", "--json").stdout)
    assert row["turns"] == 2 and row["tokens"] == 4 * (12 + 7)
    assert row["subagents"] == []  # none running
    (record,) = subagent_records(crew)
    assert record["status"] == "completed" and record["subagent_type"] == "explore"
    shown = crew.cli("transcript", "w1", "--subagent", "w1.sub-1")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert "[started: subagent_type explore" in lines[0]
    assert any("-> Read" in line and "notes.txt" in line for line in lines)
    assert any("says: Summary: notes.txt lists alpha and beta." in line for line in lines)
    missing = crew.cli("transcript", "w1", "--subagent", "w1.sub-9")
    assert missing.returncode == 2 and "w1.sub-1" in missing.stderr


def test_background_notification_starts_a_turn_when_idle(
        crew: Crew, fake_api: FakeAnthropic) -> None:
    release = threading.Event()
    sub = fake_api.route(is_typed_subagent)
    sub.push(lambda body: (release.wait(WAIT), text_reply("report <done> & ok"))[1])
    fake_api.push_tool_use("Agent", {"description": "side job", "prompt": "Do the side job.",
                                     "subagent_type": "general-purpose",
                                     "run_in_background": True})
    fake_api.push_text("Started it.")
    fake_api.push_text("Noted.")
    try:
        start(crew)
        crew.wait_idle_notes("w1", 1, timeout=WAIT)
        (row,) = json.loads(crew.cli("status", "--json").stdout)
        (running,) = row["subagents"]
        assert running["agent_id"] == "w1.sub-1" and running["status"] == "running"
        assert running["subagent_type"] == "general-purpose"
        assert running["description"] == "side job"
        assert "w1.sub-1" in crew.cli("status").stdout
    finally:
        release.set()
    crew.wait_idle_notes("w1", 2, timeout=WAIT)

    parent = [b for b in fake_api.messages_requests() if not is_typed_subagent(b)]
    assert len(parent) == 3
    (started,) = last_user(parent[1])
    assert json.loads(started["content"].splitlines()[0]) == {"agent_id": "w1.sub-1",
                                                              "status": "running"}
    (note,) = [plain(b) for b in last_user(parent[2])]
    assert re.sub(r' duration_s="\d+"', ' duration_s="N"', note["text"]) == (
        '<subagent-notification agent_id="w1.sub-1" agent_type="general-purpose"'
        ' status="completed" usage="input_tokens=12 output_tokens=7'
        ' cache_read_input_tokens=0 cache_creation_input_tokens=0" duration_s="N">'
        "report &lt;done&gt; &amp; ok</subagent-notification>")  # no calls: no `recent`
    (record,) = subagent_records(crew)
    assert record["status"] == "completed" and record["background"]


def test_agent_stop_and_the_parents_interrupt_and_kill(
        crew: Crew, fake_api: FakeAnthropic) -> None:
    sub = fake_api.route(is_typed_subagent)
    for _ in range(2):
        sub.push_tool_use("Bash", {"command": "sleep 30"})
    release = threading.Event()

    def stop_once_sleeping(body: dict[str, Any]) -> Scripted:
        child_named(crew.procs["w1"].pid, "sleep", timeout=WAIT)
        return Scripted(200, {"content": [{"type": "tool_use", "id": "toolu_stop",
                                           "name": "AgentStop",
                                           "input": {"agent_id": "w1.sub-1"}}],
                              "stop_reason": "tool_use"})

    background = {"description": "long job", "prompt": "Sleep.",
                  "subagent_type": "general-purpose", "run_in_background": True}
    fake_api.push_tool_use("Agent", background)  # first turn: start one, stop it
    fake_api.push(stop_once_sleeping)
    fake_api.push_text("Stopped it.")
    fake_api.push_tool_use("Agent", background)  # second turn: start one, get interrupted
    fake_api.push(lambda body: (release.wait(WAIT), text_reply("late"))[1])
    try:
        start(crew)
        crew.wait_idle_notes("w1", 1, timeout=WAIT)
        parent = [b for b in fake_api.messages_requests() if not is_typed_subagent(b)]
        stopped, notice = last_user(parent[2])
        assert stopped["content"] == "stopped w1.sub-1"
        assert without_usage(notice["text"]).startswith(
            '<subagent-notification agent_id="w1.sub-1" status="stopped">stopped with AgentStop')
        wait_until(lambda: not any(p.name() == "sleep" for p in
                                   psutil.Process(crew.procs["w1"].pid).children(True)), 10)

        # Interrupting the parent's turn leaves a background subagent running...
        crew.send("w1", "next job")
        sleeper = child_named(crew.procs["w1"].pid, "sleep", timeout=WAIT)
        wait_until(lambda: len(fake_api.messages_requests()) >= 7, WAIT)  # the parent waits
        assert crew.cli("interrupt", "w1").returncode == 0
        (_, note) = crew.wait_idle_notes("w1", 2, timeout=WAIT)
        assert note.idle_reason == "interrupted"
        assert sleeper.is_running()
        assert [r["status"] for r in subagent_records(crew)] == ["running", "stopped"]
        # ...killing the parent stops it, and says so.
        assert crew.cli("kill", "w1").returncode == 0
        crew.exit_code("w1")
    finally:
        release.set()
    wait_until(lambda: process_gone(sleeper), 10)
    records = {r["agent_id"]: r for r in subagent_records(crew)}
    assert records["w1.sub-2"]["status"] == "stopped"
    ended = json.loads(paths.subagent_transcript(crew.team.name, "w1", "w1.sub-2")
                       .read_text().splitlines()[-1])
    assert ended["event"] == "ended" and ended["status"] == "stopped"
    assert "its parent w1 exited" in ended["detail"]


def test_fork_request_repeats_the_parents_last_request(
        crew: Crew, fake_api: FakeAnthropic) -> None:
    fork = fake_api.route(is_fork)
    fork.push_tool_use("Agent", {"description": "nested", "prompt": "Fork again."})
    fork.push_text("fork report")
    fake_api.push_tool_use("Bash", {"command": "echo before-fork"})
    call = fake_api.push_tool_use("Agent", {"description": "side job",
                                            "prompt": "Do the side job."}, text="Forking.")
    fake_api.push_text("Done.")
    start(crew)

    def parent_requests() -> list[dict[str, Any]]:
        return [b for b in fake_api.messages_requests() if not is_fork(b)]

    # A fork runs in the background: its report arrives as a notification, at the parent's
    # next call (with "Done." or after it, as the fork's timing falls).
    wait_until(lambda: "fork report</subagent-notification>" in json.dumps(
        [b["messages"][-1] for b in parent_requests()]), WAIT)
    forks = [b for b in fake_api.messages_requests() if is_fork(b)]
    parent = parent_requests()
    assert len(forks) == 2 and len(parent) in (3, 4)
    last, first = parent[1], forks[0]
    for key in ("model", "system", "tools"):
        assert json.dumps(first[key]) == json.dumps(last[key]), key
    prefix = len(last["messages"])
    assert json.dumps(first["messages"][:prefix]) == json.dumps(last["messages"])
    # The new tail: the parent's reply, a placeholder result, then the directive.
    reply, directive = first["messages"][prefix:]
    assert reply == parent[2]["messages"][prefix]
    placeholder, text = directive["content"]
    assert placeholder["tool_use_id"] == call and placeholder["type"] == "tool_result"
    assert text["text"].startswith("<fork-rule>You are a forked worker")
    assert text["text"].endswith("\n\nDo the side job.")

    # A fork that asks to fork gets a tool error, then reports back.
    (refused,) = last_user(forks[1])
    assert refused["is_error"] and "a fork cannot fork" in refused["content"]
    result = last_user(parent[2])[0]
    assert result["tool_use_id"] == call
    assert json.loads(result["content"].splitlines()[0]) == {"agent_id": "w1.sub-1",
                                                             "status": "running"}
    # The notification is queued a moment before the parent's state.json is written, so the
    # parent's next request can come first: poll the record, don't read it once.
    (record,) = wait_until(lambda: [r for r in subagent_records(crew)
                                    if r["status"] != "running"], WAIT)
    assert record["subagent_type"] == "fork" and record["status"] == "completed"


def test_send_message_resumes_a_finished_subagent(
        crew: Crew, fake_api: FakeAnthropic) -> None:
    idle_once = threading.Event()
    sub = fake_api.route(is_typed_subagent)
    sub.push_text("first answer")
    sub.push(lambda body: (idle_once.wait(WAIT), text_reply("second answer"))[1])
    fake_api.push_tool_use("Agent", {"description": "look around", "prompt": "Look around.",
                                     "subagent_type": "code-reviewer"})
    sent = fake_api.push_tool_use("SendMessage", {"to": "w1.sub-1", "summary": "more",
                                                  "message": "Also check the tests."})
    fake_api.push_text("Asked.")
    fake_api.push_text("Got it.")
    try:
        start(crew)
        crew.wait_idle_notes("w1", 1, timeout=WAIT)
    finally:
        idle_once.set()
    crew.wait_idle_notes("w1", 2, timeout=WAIT)

    first, second = [b for b in fake_api.messages_requests() if is_typed_subagent(b)]
    assert json.dumps(second["messages"][:1]) == json.dumps(
        [{**first["messages"][0], "content": [plain(b) for b in first["messages"][0]["content"]]}])
    assert second["messages"][1]["content"][0]["text"] == "first answer"
    (resumed,) = last_user(second)
    assert resumed["text"] == ('<teammate-message from="w1" summary="more">'
                               "Also check the tests.</teammate-message>")
    parent = [b for b in fake_api.messages_requests() if not is_typed_subagent(b)]
    (answer,) = last_user(parent[2])
    assert answer["tool_use_id"] == sent and answer["content"].startswith("resumed w1.sub-1")
    assert without_usage(last_user(parent[3])[0]["text"]) == (
        '<subagent-notification agent_id="w1.sub-1" status="completed">second answer'
        "</subagent-notification>")


def test_bad_requests_are_tool_errors_and_the_parent_goes_on(
        crew: Crew, fake_api: FakeAnthropic) -> None:
    fake_api.route(is_typed_subagent).push_error(400, message="bad request from the subagent")
    calls = [{"description": "d", "prompt": "p", "subagent_type": "nope"},
             {"description": "d", "prompt": "p", "subagent_type": "explore", "model": "gpt-4"},
             {"description": "d", "prompt": "  ", "subagent_type": "explore"},
             {"description": "d", "prompt": "p", "subagent_type": "explore"}]
    fake_api.push_message([{"type": "tool_use", "id": f"toolu_{n}", "name": "Agent", "input": c}
                           for n, c in enumerate(calls)], stop_reason="tool_use")
    fake_api.push_text("Carried on.")
    start(crew)
    (note,) = crew.wait_idle_notes("w1", 1, timeout=WAIT)
    assert note.idle_reason == "available" and note.summary == "Carried on."

    parent = [b for b in fake_api.messages_requests() if not is_typed_subagent(b)]
    results = last_user(parent[1])
    assert all(r["is_error"] for r in results)
    unknown, model, empty, failed = (r["content"] for r in results)
    assert unknown == ("subagent_type: unknown agent type 'nope' (available: code-reviewer,"
                       " explore, general-purpose, plan)")
    assert model.startswith("unknown model 'gpt-4': use sonnet, opus, haiku")
    assert empty == "prompt must not be empty: say what the subagent should do"
    assert failed.startswith("subagent w1.sub-1 failed: Anthropic API 400")
    assert "bad request from the subagent" in failed


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


def test_worktree_subagents_keep_only_a_worktree_with_changes(
        crew: Crew, fake_api: FakeAnthropic) -> None:
    repo = crew.workdir
    git("init", "-q", "-b", "main", cwd=repo)
    (repo / "README").write_text("hello\n")
    git("add", "README", cwd=repo)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first", cwd=repo)
    sub = fake_api.route(is_typed_subagent)
    sub.push_tool_use("Write", {"file_path": "new.txt", "content": "from the subagent\n"})
    sub.push_text("wrote new.txt")
    sub.push_text("nothing to change")
    job = {"description": "isolated job", "prompt": "Work.", "subagent_type": "general-purpose",
           "isolation": "worktree"}
    fake_api.push_tool_use("Agent", job)
    fake_api.push_tool_use("Agent", job)
    fake_api.push_text("Both done.")
    start(crew)
    crew.wait_idle_notes("w1", 1, timeout=WAIT)

    parent = [b for b in fake_api.messages_requests() if not is_typed_subagent(b)]
    wrote = json.loads(last_user(parent[1])[0]["content"].rsplit("\n\n", 1)[1])
    kept = Path(wrote["worktree"]["path"])
    assert wrote["worktree"]["branch"] == "swarm/crew/w1.sub-1"
    assert kept.name == "w1.sub-1" and (kept / "new.txt").read_text() == "from the subagent\n"
    assert not (repo / "new.txt").exists()
    clean = json.loads(last_user(parent[2])[0]["content"].rsplit("\n\n", 1)[1])
    assert "worktree" not in clean and clean["agent_id"] == "w1.sub-2"
    listed = git("worktree", "list", "--porcelain", cwd=repo)
    assert str(kept) in listed and "w1.sub-2" not in listed
    assert git("branch", "--list", "--format=%(refname:short)", "swarm/crew/*",
               cwd=repo).split() == ["swarm/crew/w1.sub-1"]
    records = {r["agent_id"]: r["worktree"] for r in subagent_records(crew)}
    assert records == {"w1.sub-1": str(kept), "w1.sub-2": None}


@pytest.mark.usefixtures("trust_projects")  # the hook is the project's
def test_a_subagent_stop_hook_hears_of_each_ended_subagent(
        crew: Crew, fake_api: FakeAnthropic) -> None:
    """Hooks: SubagentStop, with the subagent's id, type, status and final text."""
    heard = crew.workdir / "heard.jsonl"
    settings = crew.workdir / ".swarm" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"hooks": {"SubagentStop": [
        {"command": f"cat >> {heard}; echo >> {heard}"}]}}))
    sub = fake_api.route(is_typed_subagent)
    sub.push_text("Found nothing to fix.")
    fake_api.push_tool_use("Agent", {"description": "look", "prompt": "Look around.",
                                     "subagent_type": "explore"})
    fake_api.push_text("Done.")
    start(crew)
    crew.wait_idle_notes("w1", 1, timeout=WAIT)
    (event,) = [json.loads(line) for line in heard.read_text().splitlines() if line.strip()]
    assert (event["event"], event["subagent_id"], event["subagent_type"], event["status"]) == (
        "SubagentStop", "w1.sub-1", "explore", "completed")
    assert event["last_summary"] == "Found nothing to fix." and event["agent_id"] == "w1@crew"


def test_a_subagent_calls_mcp_tools_and_its_post_tool_use_hook_runs(
        crew: Crew, fake_api: FakeAnthropic, tmp_path: Path) -> None:
    """Parity: subagents get their parent's MCP tools and their definition's servers;
    PostToolUse runs for their calls; a definition's `background` applies."""
    from tests.support.mcp_fixtures import calc_spec

    spec = calc_spec(tmp_path).model_dump(exclude_defaults=True)
    paths.user_mcp_config().parent.mkdir(parents=True, exist_ok=True)
    paths.user_mcp_config().write_text(json.dumps({"mcpServers": {"calc": spec}}))
    agents = paths.user_agents_dir()
    agents.mkdir(parents=True, exist_ok=True)
    (agents / "adder.md").write_text(
        "---\nname: adder\ndescription: adds\ntools: [mcp__calc2, mcp__calc__add]\n"
        f"background: true\nmcpServers:\n  - calc2: {json.dumps(spec)}\n---\nYou add.\n")
    seen = tmp_path / "post.jsonl"
    paths.user_settings().write_text(json.dumps({"hooks": {"PostToolUse": [
        {"matcher": "mcp__.*", "command": f"cat >> {seen}; echo >> {seen}"}]}}))

    sub = fake_api.route(is_typed_subagent)
    sub.push_tool_use("mcp__calc__add", {"a": 2, "b": 3})
    sub.push_tool_use("mcp__calc2__add", {"a": 4, "b": 5})
    sub.push_text("2+3=5 and 4+5=9")
    fake_api.push_tool_use("Agent", {"description": "add them", "prompt": "Add.",
                                     "subagent_type": "adder"})
    fake_api.push_text("Waiting.")
    fake_api.push_text("Thanks.")
    crew.spawn("w1", prompt="go", model="sonnet", mcp=("calc",))  # bypassPermissions
    crew.wait_idle_notes("w1", 2, timeout=60)

    subs = [b for b in fake_api.messages_requests() if is_typed_subagent(b)]
    # `mcp__calc2` names the whole server; of its parent's `calc`, only `add` is listed.
    assert sorted(t["name"] for t in subs[0]["tools"]) == [
        "mcp__calc2__add", "mcp__calc2__die", "mcp__calc2__fail", "mcp__calc2__nap",
        "mcp__calc__add"]
    results = [b["content"] for body in subs[1:] for b in last_user(body)
               if b.get("type") == "tool_result"]
    assert results == ["5", "9"]
    events = [json.loads(line) for line in seen.read_text().splitlines() if line.strip()]
    assert [(e["tool_name"], e["tool_result"]["content"]) for e in events] == [
        ("mcp__calc__add", "5"), ("mcp__calc2__add", "9")]
    (record,) = subagent_records(crew)
    assert record["background"] is True  # its definition's `background: true`


def test_a_person_sends_a_foreground_subagent_to_the_background(
        crew: Crew, fake_api: FakeAnthropic) -> None:
    sub = fake_api.route(is_typed_subagent)
    sub.push_tool_use("Bash", {"command": "sleep 30 && echo slept"}, text="Sleeping.")
    sub.push_text("woke up")
    call = fake_api.push_tool_use("Agent", {"description": "long job", "prompt": "Sleep.",
                                            "subagent_type": "general-purpose"})
    fake_api.push_text("Going on.")
    start(crew)
    sleeper = child_named(crew.procs["w1"].pid, "sleep", timeout=WAIT)
    # `swarm status --json` shows the running subagent and its last tool call.
    shown = json.loads(crew.cli("status", "--json").stdout)
    (running,) = next(m for m in shown if m["name"] == "w1")["subagents"]
    assert running["agent_id"] == "w1.sub-1" and running["background"] is False
    assert running["recent"] == ['Bash "sleep 30 && echo slept"']
    moved = crew.cli("interrupt", "w1", "--background")
    assert moved.returncode == 0, moved.stderr
    assert "w1.sub-1" in moved.stdout
    # The parent's wait ends at once (SWARM_AUTO_BACKGROUND_S is 120 s): its next request
    # carries the Agent call's result, and the subagent goes on.
    parent = wait_until(lambda: [b for b in fake_api.messages_requests()
                                 if not is_typed_subagent(b) and "Going" not in json.dumps(b)
                                 and any(r.get("tool_use_id") == call
                                         for r in last_user(b) if isinstance(r, dict))], WAIT)
    result = last_user(parent[-1])[0]
    assert json.loads(result["content"].splitlines()[0]) == {"agent_id": "w1.sub-1",
                                                             "status": "running"}
    assert "moved to the background" in result["content"]
    assert sleeper.is_running()
    (record,) = subagent_records(crew)
    assert record["status"] == "running" and record["background"] is True
    # Nothing runs in the foreground now: a clear one-line error, nothing sent.
    refused = crew.cli("interrupt", "w1", "--background")
    assert refused.returncode != 0
    assert "w1 has no foreground subagent running (w1.sub-1 is in the background)" in (
        refused.stderr)
    lead = crew.cli("interrupt", "team-lead", "--background")
    assert lead.returncode != 0 and "the team lead is not a teammate process" in lead.stderr
    sleeper.kill()  # the command ends (with an error): the subagent reports, the parent hears
    wait_until(lambda: '<subagent-notification agent_id=\\"w1.sub-1\\"' in json.dumps(
        fake_api.messages_requests()), WAIT)
