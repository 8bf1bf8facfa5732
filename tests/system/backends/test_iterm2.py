"""The iTerm2 backend's AppleScript, through a recording fake `osascript` first on PATH (a
process per call; what needs no osascript: tests/unit/backends/test_iterm2.py)."""

from __future__ import annotations

import json
import os
import re
import shlex
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from swarm.backends.base import PaneBackend
from swarm.backends.iterm2 import ITerm2Backend
from swarm.errors import ITerm2Error

HOSTILE = '\'; do shell script "rm -rf ~"'


FAKE = f"""#!{sys.executable}
import json, os, sys
script = sys.stdin.read()
with open(os.environ["FAKE_OSASCRIPT_LOG"], "a") as log:
    log.write(json.dumps({{"argv": sys.argv[1:], "script": script}}) + "\\n")
if os.environ.get("FAKE_OSASCRIPT_FAIL"):
    sys.stderr.write("execution error: iTerm got an error (-1743)\\n")
    sys.exit(1)
if "split vertically" in script:
    print("FAKE-SESSION-1")
elif "close found" in script:
    print("closed")
elif '"alive"' in script:
    print("alive")
"""


@pytest.fixture
def fake_osascript(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "osascript"
    fake.write_text(FAKE)
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    log = tmp_path / "osascript.log"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_OSASCRIPT_LOG", str(log))
    monkeypatch.setenv("ITERM_SESSION_ID", "w0t0p0:LEADER-UUID")
    return log


def calls(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def written_text(script: str) -> str:
    """Decode the string literal after `write text`, proving it ends where AppleScript ends it."""
    start = script.index("write text \"") + len("write text \"")
    out, i = [], start
    escapes = {"\\": "\\", '"': '"', "n": "\n", "r": "\r", "t": "\t"}
    while script[i] != '"':
        if script[i] == "\\":
            out.append(escapes[script[i + 1]])
            i += 2
        else:
            out.append(script[i])
            i += 1
    assert script[i + 1:] == "\nend tell\n"  # nothing after the literal: no breakout
    return "".join(out)


def test_create_splits_the_leader_session_and_marks_it(fake_osascript: Path) -> None:
    backend = ITerm2Backend(team="alpha")
    assert isinstance(backend, PaneBackend) and backend.type == "iterm2"
    assert backend.is_available() and backend.is_running_inside()
    assert backend.create_pane("alice", "blue") == "FAKE-SESSION-1"
    [call] = calls(fake_osascript)
    assert call["argv"] == ["-"]  # the script comes on stdin, never on the command line
    script = call["script"]
    assert 'if (unique id of s) is "LEADER-UUID" then set found to s' in script
    assert "if found is missing value then set found to current session of current window" in script
    assert "set newSession to (split vertically with default profile)" in script
    assert 'set name to "alice"' in script
    assert 'set variable named "user.swarm_team" to "alpha"' in script
    assert script.rstrip().endswith("return unique id of newSession\nend tell")


def test_run_quotes_a_hostile_prompt_and_cwd(
    fake_osascript: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cwd = tmp_path / 'my "odd" dir\'s; $(touch pwned)'
    cwd.mkdir()
    argv = ["swarm", "agent", "--agent-id", "alice@alpha", "--prompt", HOSTILE]
    env = {"PATH": os.environ["PATH"], "SWARM_TEAM": "alpha", "SWARM_NOTE": 'say "hi"'}
    ITerm2Backend(team="alpha").run_in_pane("FAKE-SESSION-1", argv, env, str(cwd))
    [call] = calls(fake_osascript)
    script = call["script"]
    assert 'if (unique id of s) is "FAKE-SESSION-1" then set found to s' in script
    # Shell-quoted, then escaped for AppleScript: the exact text of the hostile prompt.
    assert "''\\\"'\\\"'; do shell script \\\"rm -rf ~\\\"'" in script
    assert 'my \\"odd\\" dir\'\\"\'\\"\'s; $(touch pwned)\'' in script
    line = written_text(script)
    assert line.startswith(f"cd {shlex.quote(str(cwd))} && env ")
    assert shlex.split(line) == ["cd", str(cwd), "&&", "env", 'SWARM_NOTE=say "hi"',
                                 "SWARM_TEAM=alpha", *argv]
    assert "PATH=" not in line  # the new session has our PATH already: only what differs


def test_the_written_line_runs_as_exactly_argv_in_a_real_shell(
    fake_osascript: Path, tmp_path: Path
) -> None:
    cwd = tmp_path / "work dir 'x' \"y\""
    cwd.mkdir()
    probe = "import json, os, sys; print(json.dumps([os.getcwd(), sys.argv[1:], os.environ.get('SWARM_NOTE'), os.environ.get('ANTHROPIC_API_KEY')]))"
    argv = [sys.executable, "-c", probe, "--prompt", HOSTILE]
    env = dict(os.environ, SWARM_NOTE="a 'b' \"c\"", ANTHROPIC_API_KEY="sk-test-123")
    ITerm2Backend(team="alpha").run_in_pane("FAKE-SESSION-1", argv, env, str(cwd))
    line = written_text(calls(fake_osascript)[0]["script"])
    assert "sk-test-123" not in line  # secrets never reach the screen or shell history
    secret_file = Path(shlex.split(line)[4])
    assert stat.S_IMODE(secret_file.stat().st_mode) == 0o600
    home = tmp_path / "home"
    home.mkdir()
    done = subprocess.run(["/bin/sh", "-c", line], capture_output=True, text=True, check=True,
                          env=dict(os.environ, HOME=str(home)))
    assert json.loads(done.stdout) == [str(cwd), ["--prompt", HOSTILE], "a 'b' \"c\"",
                                       "sk-test-123"]
    assert not secret_file.exists() and not (cwd / "pwned").exists()


def test_close_and_alive_only_for_our_marked_session(fake_osascript: Path) -> None:
    backend = ITerm2Backend(team="alpha")
    assert backend.kill_pane("FAKE-SESSION-1") is True
    assert backend.is_pane_alive("FAKE-SESSION-1") is True
    close, alive = (c["script"] for c in calls(fake_osascript))
    assert 'if (unique id of s) is "FAKE-SESSION-1" then set found to s' in close
    assert 'set marker to (variable named "user.swarm_team" of found)' in close
    assert re.search(r'if marker is "alpha" then\n    close found\n    return "closed"', close)
    assert "close" not in alive.replace('"closed"', "")
    ITerm2Backend(team="alpha").kill_pane('x" then do shell script "rm -rf ~')
    assert 'is "x\\" then do shell script \\"rm -rf ~" then' in calls(fake_osascript)[2]["script"]


def test_osascript_failure_is_a_clear_error(
    fake_osascript: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_OSASCRIPT_FAIL", "1")
    backend = ITerm2Backend(team="alpha")
    with pytest.raises(ITerm2Error, match=r"osascript failed: .*-1743"):
        backend.create_pane("alice", None)
    assert backend.kill_pane("FAKE-SESSION-1") is False
    assert backend.is_pane_alive("FAKE-SESSION-1") is False
