"""The teammate's tools, run directly: file tools, Bash, team tools, and `run_tool`'s promise that a
failing tool is an error result for the model, never an exception."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from swarm.core.records.protocol import ShutdownResponse
from swarm.core.store import paths
from swarm.core.team.team import Team
from swarm.runtime.models.base import ModelReply, ModelRequest
from swarm.runtime.tools.base import OUTPUT_CAP, NoHost, Tool, ToolContext, ToolResult, run_tool
from swarm.runtime.tools.builtin import READ_MAX_BYTES
from swarm.runtime.tools.registry import all_tools
from swarm.runtime.turn.hooks import AllowAll
from swarm.runtime.turn.loop import Loop
from tests.support.helpers import OneCall, process_gone, wait_until


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    team = Team.create("tools")
    team.add_member("w1")
    team.add_member("w2")
    work = tmp_path / "work"
    work.mkdir()
    return ToolContext(team=team, name="w1", cwd=work,
                       env={"SWARM_TEAM": team.name, "SWARM_AGENT_ID": "w1@tools"})


TOOLS = all_tools()


def call(ctx: ToolContext, name: str, **args: Any) -> ToolResult:
    return run_tool(TOOLS[name], args, ctx)


def ok(result: ToolResult) -> str:
    assert not result.is_error, result.content
    return result.content


def err(result: ToolResult) -> str:
    assert result.is_error, result.content
    return result.content


# -- Read / Write / Edit ---------------------------------------------------------------------
def test_write_then_read_with_line_numbers_offset_and_limit(ctx: ToolContext) -> None:
    assert "wrote 14 characters" in ok(call(ctx, "Write", file_path="a/b/f.txt",
                                            content="one\ntwo\nthree\n"))
    assert (ctx.cwd / "a/b/f.txt").read_text() == "one\ntwo\nthree\n"
    assert ok(call(ctx, "Read", file_path="a/b/f.txt")) == "     1\tone\n     2\ttwo\n     3\tthree"
    assert ok(call(ctx, "Read", file_path=str(ctx.cwd / "a/b/f.txt"), offset=2, limit=1)) == \
        "     2\ttwo"
    (ctx.cwd / "empty").write_text("")
    assert ok(call(ctx, "Read", file_path="empty")) == "(empty file)"


def test_read_errors_are_results(ctx: ToolContext) -> None:
    assert "file not found" in err(call(ctx, "Read", file_path="nope.txt"))
    assert "is a directory" in err(call(ctx, "Read", file_path="."))
    assert err(call(ctx, "Read")) == "Invalid input for Read: file_path: Field required"
    (ctx.cwd / "f").write_text("x\n")
    assert err(call(ctx, "Read", file_path="f", offset="soon")).startswith(
        "Invalid input for Read: offset: Input should be a valid integer")


def test_read_caps_its_output(ctx: ToolContext) -> None:
    (ctx.cwd / "big").write_text("x" * 100 + "\n" + "y" * (OUTPUT_CAP * 2))
    out = ok(call(ctx, "Read", file_path="big"))
    assert len(out) < OUTPUT_CAP + 200 and "[output truncated:" in out


ISOLATED = """
import json, resource, sys
from pathlib import Path
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))  # a Read that grows fails fast
from swarm.runtime.tools.registry import all_tools
from swarm.runtime.tools.base import ToolContext, run_tool
name, args, cwd = sys.argv[1], json.loads(sys.argv[2]), Path(sys.argv[3])
result = run_tool(all_tools()[name], args, ToolContext(team=None, name="w1", cwd=cwd))
print(json.dumps({"content": result.content, "is_error": result.is_error}))
"""


def isolated(ctx: ToolContext, name: str, **args: Any) -> ToolResult:
    """Run a tool in a child process with a timeout and a memory cap, so a Read that blocks or
    grows fails the test instead of hanging it (or eating the machine)."""
    try:
        proc = subprocess.run([sys.executable, "-c", ISOLATED, name, json.dumps(args),
                               str(ctx.cwd)], capture_output=True, text=True, timeout=10)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"{name}({args}) did not return within 10 s") from None
    assert proc.returncode == 0, proc.stderr
    return ToolResult(**json.loads(proc.stdout))


def test_read_stops_at_a_size_cap_and_says_so(ctx: ToolContext) -> None:
    line = "y" * 99 + "\n"
    (ctx.cwd / "big.txt").write_text(line * (READ_MAX_BYTES // 100 + 500))
    out = ok(call(ctx, "Read", file_path="big.txt", limit=10**9))
    assert out.endswith(f"[file truncated at {READ_MAX_BYTES // 2**20} MiB: read on with offset"
                        f" {READ_MAX_BYTES // 100 + 1} or use Grep]")
    # Paging on past the cap still works, and a small window is not truncated.
    far = READ_MAX_BYTES // 100 + 400
    assert ok(call(ctx, "Read", file_path="big.txt", offset=far, limit=2)) == \
        f"{far:6}\t{line.strip()}\n{far + 1:6}\t{line.strip()}"
    assert "truncated" not in ok(call(ctx, "Read", file_path="big.txt", limit=5))
    # One line longer than the cap is cut, not read whole.
    (ctx.cwd / "long.txt").write_text("z" * (READ_MAX_BYTES * 2))
    assert "[file truncated at" in ok(call(ctx, "Read", file_path="long.txt"))


def test_write_into_a_file_path_is_an_error(ctx: ToolContext) -> None:
    (ctx.cwd / "file").write_text("x")
    assert err(call(ctx, "Write", file_path="file/inner.txt", content="y"))


def test_edit_replaces_exactly_once_or_all(ctx: ToolContext) -> None:
    path = ctx.cwd / "e.py"
    path.write_text("a = 1\nb = 1\n")
    assert "1 replacement" in ok(call(ctx, "Edit", file_path="e.py", old_string="a = 1",
                                      new_string="a = 2"))
    assert path.read_text() == "a = 2\nb = 1\n"
    assert "occurs 2 times" in err(call(ctx, "Edit", file_path="e.py", old_string=" = ",
                                        new_string="="))
    assert path.read_text() == "a = 2\nb = 1\n"  # a refused edit changes nothing
    assert "2 replacement" in ok(call(ctx, "Edit", file_path="e.py", old_string=" = ",
                                      new_string="=", replace_all=True))
    assert path.read_text() == "a=2\nb=1\n"
    assert "was not found" in err(call(ctx, "Edit", file_path="e.py", old_string="zzz",
                                       new_string="y"))
    assert "was not found" in err(call(ctx, "Edit", file_path="e.py", old_string="",
                                       new_string="y"))
    assert "file not found" in err(call(ctx, "Edit", file_path="nope.py", old_string="a",
                                        new_string="b"))


# -- Glob / Grep -----------------------------------------------------------------------------
def test_glob_and_grep(ctx: ToolContext) -> None:
    (ctx.cwd / "src/pkg").mkdir(parents=True)
    (ctx.cwd / "src/pkg/m.py").write_text("import os\nVALUE = 42\n")
    (ctx.cwd / "src/notes.md").write_text("VALUE is documented\n")
    (ctx.cwd / ".git").mkdir()
    (ctx.cwd / ".git/x.py").write_text("VALUE = 0\n")
    (ctx.cwd / "bin.dat").write_bytes(b"\xff\xfeVALUE\x00")

    assert ok(call(ctx, "Glob", pattern="**/*.py")) == "src/pkg/m.py"  # .git skipped
    assert ok(call(ctx, "Glob", pattern="*.md", path="src")) == "notes.md"
    assert ok(call(ctx, "Glob", pattern="*.rs")) == "(no matches)"
    # An absolute pattern used to raise NotImplementedError out of the tool (ending the agent).
    assert isinstance(call(ctx, "Glob", pattern=str(ctx.cwd / "*.md")), ToolResult)

    hits = ok(call(ctx, "Grep", pattern=r"VALUE\s*=")).splitlines()
    assert hits == [f"{ctx.cwd}/src/pkg/m.py:2:VALUE = 42"]  # not .git, not the binary file
    assert ok(call(ctx, "Grep", pattern="VALUE", glob="*.md")).endswith("notes.md:1:VALUE is documented")
    assert ok(call(ctx, "Grep", pattern="import", path="src/pkg/m.py")).endswith("m.py:1:import os")
    assert ok(call(ctx, "Grep", pattern="absent")) == "(no matches)"
    assert "invalid regular expression" in err(call(ctx, "Grep", pattern="(unclosed"))


# -- Bash ------------------------------------------------------------------------------------
def test_bash_runs_in_the_cwd_with_the_agent_env(ctx: ToolContext) -> None:
    out = ok(call(ctx, "Bash", command="pwd; echo $SWARM_AGENT_ID; echo err >&2"))
    assert out.splitlines() == [str(ctx.cwd), "w1@tools", "err"]
    assert ok(call(ctx, "Bash", command="true")) == "(no output)"


def test_bash_nonzero_exit_is_an_error_result_with_output(ctx: ToolContext) -> None:
    out = err(call(ctx, "Bash", command="echo partial; exit 3"))
    assert out == "partial\n\n[exit code 3]"


def test_bash_timeout_kills_the_whole_tree(ctx: ToolContext) -> None:
    pidfile = ctx.cwd / "child.pid"
    start = time.monotonic()
    out = err(call(ctx, "Bash", command=f"sleep 30 & echo $! > {pidfile}; echo started; wait",
                   timeout=0.5))
    assert time.monotonic() - start < 5
    assert "started" in out and "command timed out after 0.5s" in out
    child = int(pidfile.read_text())

    wait_until(lambda: process_gone(child), 5, message="the backgrounded sleep to be killed with its group")


def test_bash_output_is_capped(ctx: ToolContext) -> None:
    out = ok(call(ctx, "Bash", command=f"head -c {OUTPUT_CAP + 5000} /dev/zero | tr '\\0' x"))
    assert out.startswith("x" * 100)
    assert out.endswith("[output truncated: 5000 more characters]")


class RecordingHost(NoHost):
    def __init__(self, pending_shutdown: str | None = None) -> None:
        self.processes: list[object] = []
        self.sent: list[object] = []
        self.pending = pending_shutdown

    def track_process(self, proc: object) -> None:  # type: ignore[override]
        self.processes.append(proc)

    def structured_sent(self, message: object) -> None:
        self.sent.append(message)

    def pending_shutdown_id(self) -> str | None:
        return self.pending


def test_bash_reports_the_process_to_the_runtime(ctx: ToolContext) -> None:
    ctx.host = host = RecordingHost()
    ok(call(ctx, "Bash", command="echo hi"))
    seen = host.processes
    assert len(seen) == 2 and seen[0] is not None and seen[1] is None


# -- run_tool never raises ---------------------------------------------------------------------
class Exploding(Tool):
    name = "Exploding"

    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raise self.exc


@pytest.mark.parametrize("exc", [RuntimeError("boom"), NotImplementedError("nope"),
                                 IndexError("idx"), ZeroDivisionError("zero"),
                                 AttributeError("attr"), PermissionError("denied")])
def test_a_failing_tool_becomes_an_error_result(ctx: ToolContext, exc: Exception) -> None:
    result = run_tool(Exploding(exc), {}, ctx)
    assert result.is_error and type(exc).__name__ in result.content and str(exc) in result.content


def test_the_loop_answers_bad_calls_with_errors(ctx: ToolContext) -> None:
    uses: list[dict[str, Any]] = [{"type": "tool_use", "id": "u1", "name": "Teleport", "input": {}},
            {"type": "tool_use", "id": "u2", "name": "Read", "input": "not an object"},
            {"type": "tool_use", "id": "u3", "name": "Read", "input": {"file_path": "missing"}},
            {"type": "tool_use", "id": "u4", "name": "Glob", "input": {"pattern": "/abs/*"}}]
    loop = Loop(model=OneCall(uses), tools=dict(TOOLS), system="s", ctx=ctx, permits=AllowAll())
    outcome = loop.run([{"type": "text", "text": "go"}])
    assert outcome.reason == "available" and outcome.last_text == "ok"
    results = loop.messages[2]["content"]
    assert [r["tool_use_id"] for r in results] == ["u1", "u2", "u3", "u4"]
    assert [bool(r.get("is_error")) for r in results[:3]] == [True, True, True]
    assert "unknown tool 'Teleport'" in results[0]["content"]
    assert "must be an object" in results[1]["content"]


# -- SendMessage -------------------------------------------------------------------------------
def test_send_message_plain_text_needs_a_summary(ctx: ToolContext) -> None:
    assert "summary is required" in err(call(ctx, "SendMessage", to="w2", message="hi"))
    assert "summary is required" in err(call(ctx, "SendMessage", to="w2", message="hi",
                                             summary="  "))
    assert ctx.team.inbox("w2").messages() == []
    assert "1 recipient" in ok(call(ctx, "SendMessage", to="w2", message="hi", summary="greeting"))
    (message,) = ctx.team.inbox("w2").messages()
    assert (message.sender, message.text, message.summary) == ("w1", "hi", "greeting")


def test_send_message_to_an_unknown_recipient_is_refused(ctx: ToolContext) -> None:
    out = err(call(ctx, "SendMessage", to="ghost", message="hi", summary="s"))
    assert "'ghost' is not a member" in out
    assert not paths.inbox(ctx.team.name, "ghost").exists()  # no phantom inbox


def test_broadcast_plain_text_but_not_structured(ctx: ToolContext) -> None:
    assert "2 recipient" in ok(call(ctx, "SendMessage", to="*", message="all", summary="all"))
    assert [m.text for m in ctx.team.inbox("w2").messages()] == ["all"]
    assert [m.text for m in ctx.team.inbox("team-lead").messages()] == ["all"]
    assert ctx.team.inbox("w1").messages() == []  # not to the sender
    out = err(call(ctx, "SendMessage", to="*", message={"type": "shutdown_request"}))
    assert "cannot be broadcast" in out
    assert len(ctx.team.inbox("w2").messages()) == 1


def test_shutdown_response_goes_only_to_the_lead(ctx: ToolContext) -> None:
    ctx.host = host = RecordingHost(pending_shutdown="req-1")
    sent = host.sent
    reply = {"type": "shutdown_response", "approve": True}
    assert "only be sent to team-lead" in err(call(ctx, "SendMessage", to="w2", message=reply))
    assert sent == [] and ctx.team.inbox("w2").messages() == []
    # A refusal needs a reason.
    assert "reason" in err(call(ctx, "SendMessage", to="team-lead",
                                message={"type": "shutdown_response", "approve": False}))
    # The missing request_id is the pending request's; a JSON string works like an object.
    assert ok(call(ctx, "SendMessage", to="team-lead",
                   message='{"type": "shutdown_response", "approve": true}')).endswith(
        "(approved: finishing)")
    (answer,) = [m.structured() for m in ctx.team.inbox("team-lead").messages()]
    assert isinstance(answer, ShutdownResponse)
    assert answer.request_id == "req-1" and answer.approve
    assert sent == [answer]


# -- Task tools --------------------------------------------------------------------------------
def test_task_tools(ctx: ToolContext) -> None:
    assert ok(call(ctx, "TaskList")) == "(no tasks)"
    assert ok(call(ctx, "TaskCreate", subject="build", description="make")) == "created task #1: build"
    assert ok(call(ctx, "TaskCreate", subject="test", blocked_by=["1"])) == "created task #2: test"
    assert ok(call(ctx, "TaskList")).splitlines() == [
        "#1 [pending] owner=- build", "#2 [pending] owner=- blocked_by=1 test"]
    assert '"subject": "build"' in ok(call(ctx, "TaskGet", task_id="1"))
    assert "blocked by unfinished" in err(call(ctx, "TaskUpdate", task_id="2", status="in_progress"))
    assert ok(call(ctx, "TaskUpdate", task_id="1", status="completed", result="built",
                   owner="w1")) == "task #1 is completed (owner w1)"
    assert ctx.team.tasks.get("1").result == "built"
    assert err(call(ctx, "TaskGet", task_id="99")).lower().startswith("no task '99'")
    assert "Invalid input for TaskUpdate: status: Input should be 'pending'" in err(
        call(ctx, "TaskUpdate", task_id="1", status="done"))


def test_bash_gets_the_users_environment_as_it_is(
        ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    probe = 'echo "${PYDANTIC_DISABLE_PLUGINS:-unset}"'
    assert ok(call(ctx, "Bash", command=probe)).strip() == "unset"
    monkeypatch.setenv("PYDANTIC_DISABLE_PLUGINS", "__all__")  # the user's own setting is kept
    assert ok(call(ctx, "Bash", command=probe)).strip() == "__all__"


@pytest.mark.parametrize("tool", ["Write", "Edit"])
def test_a_reader_never_sees_a_file_half_written(ctx: ToolContext, tool: str) -> None:
    """Write and Edit replace the file in one rename: a peer reading it meanwhile gets the old
    content or the new, never a part (each version is 4 MB of one letter)."""

    path = ctx.cwd / "big.txt"
    size = 4 * 2**20
    path.write_text("a" * size)
    seen: set[str] = set()
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            data = path.read_text()
            # one letter throughout: counted in C (a set of 4 M letters holds the GIL for long)
            seen.add("whole" if len(data) == size and data.count(data[0]) == size else
                     f"part: {len(data)} bytes, letters {sorted(set(data))}")

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for letter in "bcdefgh":
            if tool == "Write":
                ok(call(ctx, "Write", file_path="big.txt", content=letter * size))
            else:
                old = path.read_text()[0] * size
                ok(call(ctx, "Edit", file_path="big.txt", old_string=old, new_string=letter * size))
    finally:
        stop.set()
        reader.join()
    assert seen == {"whole"}


def test_write_keeps_the_files_mode_and_writes_through_a_symlink(ctx: ToolContext) -> None:
    script = ctx.cwd / "run.sh"
    script.write_text("echo old\n")
    script.chmod(0o750)
    ok(call(ctx, "Write", file_path="run.sh", content="echo new\n"))
    assert script.read_text() == "echo new\n" and (script.stat().st_mode & 0o777) == 0o750
    (ctx.cwd / "link.sh").symlink_to("run.sh")
    ok(call(ctx, "Edit", file_path="link.sh", old_string="new", new_string="newer"))
    assert (ctx.cwd / "link.sh").is_symlink() and script.read_text() == "echo newer\n"
    fresh = ctx.cwd / "fresh.txt"
    ok(call(ctx, "Write", file_path="fresh.txt", content="x"))
    assert fresh.stat().st_mode & 0o777 == 0o666 & ~_umask()
    assert sorted(p.name for p in ctx.cwd.iterdir()) == ["fresh.txt", "link.sh", "run.sh"]


def _umask() -> int:
    out = subprocess.run(["sh", "-c", "umask"], capture_output=True, text=True, check=True)
    return int(out.stdout.strip(), 8)


# -- Write and Edit take file_path, only ----------------------------------------------------------
@pytest.fixture
def src_ctx(tmp_path: Path) -> ToolContext:
    """A member's context whose working directory holds src/a.py ("old")."""
    team = Team.create("tools")
    team.add_member("w1")
    work = tmp_path / "work"
    (work / "src").mkdir(parents=True)
    (work / "src" / "a.py").write_text("old\n")
    return ToolContext(team=team, name="w1", cwd=work)


BAD_PATHS: list[Any] = [0, False, "", "  ", None, ["src/a.py"], {"p": 1}]


class Calls:
    def __init__(self, uses: list[dict[str, Any]]) -> None:
        self.uses = uses
        self.name = "calls"

    def complete(self, request: ModelRequest) -> ModelReply:
        if request.messages[-1]["content"][0].get("type") == "tool_result":
            return ModelReply([{"type": "text", "text": "ok"}])
        return ModelReply(self.uses, "tool_use")


@pytest.mark.parametrize("tool", ["Write", "Edit", "Read"])
def test_the_file_tools_take_a_non_empty_string_file_path_only(
        src_ctx: ToolContext, tool: str) -> None:
    for bad in [*BAD_PATHS, "missing"]:
        args: dict[str, Any] = {"path": "src/a.py", "content": "new\n", "old_string": "old",
                                "new_string": "new"}
        if bad != "missing":
            args["file_path"] = bad
        result = run_tool(all_tools()[tool], args, src_ctx)
        assert result.is_error and "file_path" in result.content, (bad, result.content)
    assert sorted(p.name for p in src_ctx.cwd.iterdir()) == ["src"]  # no `0`, no `False`
    assert (src_ctx.cwd / "src" / "a.py").read_text() == "old\n"  # `path` was never used


def test_a_bad_file_path_is_refused_before_any_permission_is_asked(
        src_ctx: ToolContext) -> None:
    asked: list[str] = []

    class Recording(AllowAll):
        def check(self, tool: Any, args: dict[str, Any], use_id: str,
                  must_ask: str | None = None) -> Any:
            asked.append(use_id)
            return super().check(tool, args, use_id)

    uses = [{"type": "tool_use", "id": f"u{i}", "name": name,
             "input": {"file_path": bad, "path": "src/a.py", "content": "x",
                       "old_string": "old", "new_string": "x"}}
            for i, (name, bad) in enumerate([("Write", 0), ("Write", False), ("Edit", "")])]
    loop = Loop(model=Calls(uses), tools=all_tools(), system="s", ctx=src_ctx,
                permits=Recording())
    loop.run([{"type": "text", "text": "go"}])
    results = loop.messages[2]["content"]
    assert all(r.get("is_error") and "file_path" in r["content"] for r in results), results
    assert asked == []  # nobody was asked about a call that names no file
    assert sorted(p.name for p in src_ctx.cwd.iterdir()) == ["src"]
