"""The model credential is out of an agent CLI teammate's shell's reach: a
command the CLI runs reads its environment, the environment every process it can see was
started with (its parent, the ancestors, the CLI's MCP server), the command lines of the
teammate's processes and every file they name, and the CLIs' own config files: the real key is
nowhere; the fake model API still receives it (swarm's loopback proxy puts it back)."""

# ruff: noqa: F811 - the CLI fixtures are imported from their test modules and used by name
from __future__ import annotations

import json
import os
import secrets
from pathlib import Path
from typing import Any

import pytest

from swarm.core.team.state import read_state
from tests.agents.test_claude_code import answered, claude_env, ok  # noqa: F401
from tests.agents.test_codex import codex_env  # noqa: F401 - the fixture
from tests.agents.test_gemini import MODEL, gemini_env  # noqa: F401 - the fixture
from tests.agents.test_untrusted import checkout
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.fake_gemini import FakeGemini
from tests.support.fake_responses import FakeResponses
from tests.support.helpers import wait_until

# What the teammate's shell runs: everything it can read that might hold the key, into a file.
PROBE = r'''
import json, os, sys
out = {"env": dict(os.environ), "environ": {}, "cmdline": {}, "files": {}}
def read(path):
    try:
        with open(path, "rb") as f:
            return f.read(2_000_000).decode("utf-8", "replace")
    except OSError as exc:
        return None
ancestors, pid = [], os.getppid()
while pid > 1:
    ancestors.append(pid)
    stat = read(f"/proc/{pid}/stat") or ""
    pid = int(stat.rsplit(")", 1)[1].split()[1]) if ")" in stat else 0
out["ancestors"] = ancestors
parents = {}
for entry in filter(str.isdigit, os.listdir("/proc")):
    stat = read(f"/proc/{entry}/stat") or ""
    if ")" in stat:
        parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
agent = next((p for p in ancestors if "--agent-id" in (read(f"/proc/{p}/cmdline") or "")), 0)
def in_tree(pid, top=agent):
    while pid > 1 and pid != top:
        pid = parents.get(pid, 0)
    return pid == top
for pid in parents:
    environ, cmdline = read(f"/proc/{pid}/environ"), read(f"/proc/{pid}/cmdline")
    if environ is not None:
        out["environ"][str(pid)] = environ  # every process: none may have been started with it
    if cmdline and in_tree(pid):  # the teammate's own processes: the files they name
        out["cmdline"][str(pid)] = cmdline
        for arg in cmdline.split("\0"):
            for part in (arg, arg.partition("=")[2]):
                if part.startswith("/") and os.path.isfile(part) and not part.startswith(
                        ("/usr", "/bin", "/lib", "/proc", "/root/.pyenv", sys.prefix)):
                    out["files"][part] = read(part)
home = os.path.expanduser("~")
for root, _, names in os.walk(home):
    if "node_modules" in root:
        continue
    for name in names:
        path = os.path.join(root, name)
        if os.path.getsize(path) < 2_000_000:
            out["files"][path] = read(path)
json.dump(out, open(sys.argv[1] + ".part", "w"))
os.rename(sys.argv[1] + ".part", sys.argv[1])
'''


def probe(tmp_path: Path) -> tuple[Path, Path, str]:
    repo = checkout(tmp_path / "repo", {"probe.py": PROBE})
    return repo, repo / "found.json", f"python3 probe.py {repo / 'found.json'}"


def found(path: Path) -> dict[str, Any]:
    wait_until(path.exists, 90, message="the probe ran")
    return dict(json.loads(path.read_text()))


def nowhere(key: str, seen: dict[str, Any], agent_pid: int) -> None:
    assert key not in json.dumps(seen["env"]), "the shell's environment holds the key"
    holding = [pid for pid, text in seen["environ"].items() if key in text]
    assert holding == [], f"processes started with the key: {holding}"
    assert [p for p, text in seen["cmdline"].items() if key in text] == []
    assert [f for f, text in seen["files"].items() if text and key in text] == []
    assert agent_pid in seen["ancestors"]
    # As root (CAP_SYS_PTRACE) the agent's starting environment is read, and holds no key (it
    # zeroed it); as any other user it cannot be opened at all (non-dumpable).
    assert (str(agent_pid) in seen["environ"]) == (os.geteuid() == 0)


def agent_pid(name: str) -> int:
    state = wait_until(lambda: read_state("alpha", name), 30)
    assert state.pid is not None
    return state.pid


def real_key(prefix: str) -> str:
    return f"{prefix}REAL{secrets.token_hex(16)}"


def test_a_claude_code_teammates_shell_never_sees_its_key(
        claude_env: FakeAnthropic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = real_key("sk-ant-")
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    repo, out, run = probe(tmp_path)
    claude_env.push_tool_use("Bash", {"command": run, "description": "look"})
    claude_env.push_text("Looked.")
    ok("spawn", "cc", "--agent", "claude-code", "--backend", "hidden", "--cwd", str(repo),
       "--allow", f"Bash({run})", "--prompt", "look around")
    seen = found(out)
    wait_until(lambda: answered("cc"), 90, message="the teammate ended its turn")
    nowhere(key, seen, agent_pid("cc"))
    assert {r.api_key for r in claude_env.requests} == {key}  # the API got the real one


def test_a_codex_teammates_shell_never_sees_its_key(
        codex_env: FakeResponses, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = real_key("sk-")
    monkeypatch.setenv("OPENAI_API_KEY", key)  # its provider's env_key (tests: fake_responses)
    repo, out, run = probe(tmp_path)
    codex_env.push_tool_use("exec_command", {"cmd": run})
    codex_env.push_text("Looked.")
    ok("spawn", "cx", "--agent", "codex", "--backend", "hidden", "--cwd", str(repo),
       "--allow", f"Bash({run})", "--prompt", "look around")
    seen = found(out)
    wait_until(lambda: answered("cx"), 90, message="the teammate ended its turn")
    nowhere(key, seen, agent_pid("cx"))
    assert {r.headers.get("authorization") for r in codex_env.requests
            if r.path.endswith("/responses")} == {f"Bearer {key}"}


def test_a_gemini_teammates_shell_never_sees_its_key(
        gemini_env: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = real_key("AIza")
    monkeypatch.setenv("GEMINI_API_KEY", key)
    repo, out, run = probe(tmp_path)
    gemini_env.push_tool_use("run_shell_command", {"command": run, "description": "look"})
    gemini_env.push_text("Looked.")
    ok("spawn", "gm", "--agent", "gemini", "--model", MODEL, "--backend", "hidden", "--cwd",
       str(repo), "--allow", f"Bash({run})", "--prompt", "look around")
    seen = found(out)
    wait_until(lambda: answered("gm"), 90, message="the teammate ended its turn")
    nowhere(key, seen, agent_pid("gm"))
    sent = {r.headers.get("x-goog-api-key") for r in gemini_env.requests if ":" in r.path}
    assert sent == {key}
