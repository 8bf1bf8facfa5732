"""What the auto-mode tests share: scripted `command:` reviewers (each logs what it was shown),
a git checkout to work in, and the decision records of a member."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, TypeVar

from swarm.core.records.protocol import PermissionRequest
from swarm.core.team import decisions
from tests.support.agent_fixtures import Crew
from tests.support.helpers import wait_until

GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}

# The verdict each kind of scripted reviewer gives (`pending` is the request's pending call).
VERDICTS = {
    "allow": 'print(json.dumps({"decision": "allow", "risk": "low", "reason": "fits its task"}))',
    "deny": 'print(json.dumps({"decision": "deny", "risk": "high", "reason": "not its task"}))',
    "rule": ('bad = "RISKY" in pending["call"] or "pytest" in pending["call"]\n'
             'print(json.dumps({"decision": "deny" if bad else "allow", "risk": "medium",'
             ' "reason": "risky" if bad else "fine"}))'),
    "crash": "sys.exit(3)",
    "hang": "time.sleep(600)",
    "garbage": 'print("not json")',
    "maybe": 'print(json.dumps({"decision": "maybe"}))',
}


T = TypeVar("T")


def reviewer(tmp_path: Path, kind: str) -> tuple[Path, Path]:
    """(the reviewer program, the log of every request it was given: one JSON per line)."""
    log = tmp_path / f"reviewer-{kind}.log"
    prog = tmp_path / f"reviewer-{kind}"
    prog.write_text(f"#!{sys.executable}\n"
                    "import json, sys, time\n"
                    "data = sys.stdin.read()\n"
                    f"with open({str(log)!r}, 'a') as out:\n"
                    "    out.write(json.dumps(json.loads(data)) + '\\n')\n"
                    "pending = json.loads(data)['pending']\n"
                    f"{VERDICTS[kind]}\n")
    prog.chmod(0o755)
    return prog, log


def reviewed(log: Path) -> list[dict[str, Any]]:
    try:
        return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    except FileNotFoundError:
        return []


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV}).stdout


def checkout(crew: Crew) -> Path:
    """Make the crew's workdir a git checkout with one commit (src/a.py, tests/test_a.py)."""
    work = crew.workdir
    (work / "src").mkdir(exist_ok=True)
    (work / "src" / "a.py").write_text("x = 1\n")
    (work / "tests").mkdir(exist_ok=True)
    (work / "tests" / "test_a.py").write_text("def test_a():\n    assert True\n")
    git(work, "init", "-q", "-b", "main")
    git(work, "add", ".")
    git(work, "commit", "-qm", "first")
    return work


def records(crew: Crew, name: str) -> list[dict[str, Any]]:
    return decisions.calls(crew.team.name, name)


def wait_records(crew: Crew, name: str, count: int, timeout: float = 20.0
                 ) -> list[dict[str, Any]]:
    """The first `count` decision records of `name`, once there are that many."""
    found = wait_until(lambda: at_least(records(crew, name), count),
                       timeout, message=f"{count} decisions of {name} (now "
                       f"{records(crew, name)}; log {crew.log(name)[-600:]})")
    return found[:count]


def at_least(items: list[T], count: int) -> list[T] | None:
    return items if len(items) >= count else None


def requests(crew: Crew, name: str) -> list[PermissionRequest]:
    return [s for m in crew.lead_messages() if m.sender == name
            and isinstance(s := m.structured(), PermissionRequest)]


def wait_request(crew: Crew, name: str, count: int = 1) -> PermissionRequest:
    found = wait_until(lambda: at_least(requests(crew, name), count),
                       20, message=f"{count} permission requests from {name} "
                       f"(log {crew.log(name)[-600:]})")
    return found[count - 1]
