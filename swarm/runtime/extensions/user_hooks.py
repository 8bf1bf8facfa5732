"""Hooks: shell commands the user configures to run on an agent's events (docs/design/hooks-mcp.md).

Settings: `hooks` in `$SWARM_HOME/settings.json` (user) and the nearest
`<project>/.swarm/settings.json` from the agent's cwd up to the git root, in a trusted project
only (core/trust/workspace.py); both apply, user hooks first.
`{EVENT: [{"matcher": "<regex on tool name>", "command": "<shell>", "timeout": 60, "env": {}}]}`;
Claude Code's nested spelling `{"matcher": .., "hooks": [{"type": "command", "command": ..}]}`
is read as the same. Loaded once when the agent starts; a malformed file or a bad field is one
problem naming the file and field, and the valid rest applies.

A hook runs with `bash -c` in the agent's cwd with a minimal environment (core/trust/child_env.py)
plus what its entry's `env` names (`${VAR}` expanded from the agent's environment), its own
process group, the event's JSON on stdin, and stdout/stderr going to unlinked temporary files (so a
hook that never reads stdin, or leaves a background child holding its output, cannot block
us). Exit 0: go on. Exit 2: block, stderr is the reason; the first hook of an event that exits
2 decides and the rest do not run. Anything else, a timeout (its group is killed) or a hook
that cannot start: a warning in the agent's log, and go on.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import msgspec
from msgspec import Struct

from swarm.core.store import paths
from swarm.core.trust.child_env import entry_env
from swarm.core.trust.config_files import (
    ConfigProblem,
    problems_of,
    read_config_file,
    read_json_object,
)
from swarm.core.trust.workspace import ProjectConfig, decide

EVENTS = ("PreToolUse", "PostToolUse", "TaskCreated", "TaskCompleted", "TeammateIdle",
          "SubagentStop", "SessionEnd")
TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse"})
BLOCK_EXIT = 2
FEEDBACK_CAP = 10_000  # characters of a blocking hook's stderr handed on


class Hook(Struct, frozen=True):
    event: str
    command: str
    matcher: str | None
    timeout: float
    source: str
    env: Mapping[str, str] = msgspec.field(default_factory=dict)

    def matches(self, tool_name: str | None) -> bool:
        """`matcher` is a regex that must match the whole tool name; none matches every tool."""
        if self.matcher is None or self.event not in TOOL_EVENTS:
            return True
        return tool_name is not None and re.fullmatch(self.matcher, tool_name) is not None


def parse_hooks(data: dict[str, Any], path: str) -> tuple[list[Hook], list[ConfigProblem]]:
    """The hooks of one settings object; one problem per bad event or entry, the rest kept."""
    value = data.get("hooks")
    if value is None:
        return [], []
    if not isinstance(value, dict):
        return [], [ConfigProblem(path=path, field="hooks",
                                  message="must be an object of {EVENT: [hooks]}")]
    hooks: list[Hook] = []
    problems: list[ConfigProblem] = []
    for event, entries in value.items():
        where = f"hooks.{event}"
        if event not in EVENTS:
            problems.append(ConfigProblem(path=path, field=where,
                                          message=f"unknown event; known: {', '.join(EVENTS)}"))
            continue
        if not isinstance(entries, list):
            problems.append(ConfigProblem(path=path, field=where,
                                          message="must be a list of hooks"))
            continue
        for index, raw in enumerate(entries):
            hooks.extend(_entry(event, raw, f"{where}[{index}]", path, problems))
    return hooks, problems


def _entry(event: str, raw: Any, where: str, path: str,
           problems: list[ConfigProblem]) -> list[Hook]:
    if not isinstance(raw, dict):
        problems.append(ConfigProblem(path=path, field=where,
                                      message="must be an object {matcher, command, timeout}"))
        return []
    if "hooks" in raw:  # Claude Code's nesting: one matcher, several commands
        inner = raw.get("hooks")
        rest = {k: v for k, v in raw.items() if k != "hooks"}
        if not isinstance(inner, list) or set(rest) - {"matcher"}:
            problems.append(ConfigProblem(path=path, field=where, message=(
                "a nested entry is {\"matcher\": ..., \"hooks\": [{\"command\": ...}]}")))
            return []
        out: list[Hook] = []
        for i, item in enumerate(inner):
            merged = {**rest, **item} if isinstance(item, dict) else item
            out.extend(_entry(event, merged, f"{where}.hooks[{i}]", path, problems))
        return out
    # pydantic checks an entry: imported when a settings file has one, not at every start-up.
    from pydantic import ValidationError

    from swarm.runtime.extensions.hook_entry import HookEntry

    try:
        entry = HookEntry(**raw)
    except ValidationError as exc:
        problems.extend(problems_of(exc, path, where))
        return []
    return [Hook(event=event, command=entry.command, matcher=entry.matcher,
                 timeout=entry.timeout, source=path, env=entry.env)]


def load_hooks(cwd: str | Path, origin: Path | None = None, *,
               project: ProjectConfig | None = None) -> tuple[list[Hook], list[ConfigProblem]]:
    """User hooks, then project hooks (both apply). `project`: the trusted project
    configuration to use (default: `cwd`'s, if it is trusted now); `origin`: where to look when
    `cwd` has no project settings (a worktree's checkout, for settings not committed)."""
    if project is None:
        project = decide(cwd, origin).project
    hooks: list[Hook] = []
    problems: list[ConfigProblem] = []
    sources: list[tuple[str, tuple[dict[str, Any] | None, ConfigProblem | None]]] = [
        (str(paths.user_settings()), read_json_object(paths.user_settings()))]
    settings_file = project.first("settings")
    if settings_file is not None:
        sources.append((str(settings_file.path), read_config_file(settings_file)))
    for path, (data, problem) in sources:
        if problem is not None:
            problems.append(problem)
        if data:
            found, bad = parse_hooks(data, path)
            hooks.extend(found)
            problems.extend(bad)
    return hooks, problems


class HookResult(Struct, dict=True):
    blocked: bool = False
    reason: str = ""  # the blocking hook's stderr (or a stand-in when it printed nothing)
    ran: int = 0


@dataclass
class HookRunner:
    """Runs the hooks of one agent. Never raises for a hook's failure: it warns and goes on."""

    hooks: list[Hook]
    team: str
    agent_id: str
    cwd: Path
    env: dict[str, str]  # every hook's base environment (a minimal one: core/trust/child_env.py)
    warn: Callable[[str], None] = lambda line: None
    # The agent tracks the running hook so an interrupt (SIGINT) can kill it like a Bash command.
    on_process: Callable[[subprocess.Popen[bytes] | None], None] = lambda proc: None
    # The agent's own environment, where a hook's `env` values are expanded from.
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    _by_event: dict[str, list[Hook]] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        for hook in self.hooks:
            self._by_event.setdefault(hook.event, []).append(hook)

    def has(self, event: str) -> bool:
        return bool(self._by_event.get(event))

    def payload(self, event: str, fields: dict[str, Any]) -> dict[str, Any]:
        return {"event": event, "team": self.team, "agent_id": self.agent_id,
                "cwd": str(self.cwd), **fields}

    def run(self, event: str, tool_name: str | None = None, **fields: Any) -> HookResult:
        """Run the event's matching hooks in order; the first exit 2 blocks and stops the rest."""
        result = HookResult()
        matching = [h for h in self._by_event.get(event, ()) if h.matches(tool_name)]
        if not matching:
            return result
        if tool_name is not None:
            fields = {"tool_name": tool_name, **fields}
        data = json.dumps(self.payload(event, fields), default=str).encode()
        for hook in matching:
            result.ran += 1
            code, stderr = self._run_one(hook, data)
            if code == BLOCK_EXIT:
                result.blocked = True
                text = stderr.strip()
                if len(text) > FEEDBACK_CAP:
                    text = text[:FEEDBACK_CAP] + "\n... [hook output truncated]"
                result.reason = text or f"blocked by a {event} hook ({hook.command})"
                return result
        return result

    def _run_one(self, hook: Hook, data: bytes) -> tuple[int | None, str]:
        label = f"{hook.event} hook `{_brief(hook.command)}` ({hook.source})"
        with (tempfile.TemporaryFile() as stdin, tempfile.TemporaryFile() as out,
              tempfile.TemporaryFile() as err):
            stdin.write(data)
            stdin.seek(0)
            missing: list[str] = []
            env = {**self.env, **entry_env(hook.env, self.environ, missing)}
            if missing:
                self.warn(f"warning: {label}: {', '.join(missing)} not set")
            try:
                proc = subprocess.Popen(["bash", "-c", hook.command], cwd=self.cwd, env=env,
                                        stdin=stdin, stdout=out, stderr=err,
                                        start_new_session=True)
            except OSError as exc:
                self.warn(f"warning: {label} could not start: {exc}; going on")
                return None, ""
            self.on_process(proc)
            try:
                code: int | None = proc.wait(timeout=hook.timeout)
            except subprocess.TimeoutExpired:
                code = None
            finally:
                self.on_process(None)
                if proc.poll() is None:  # timed out, or we are being stopped: end its group
                    _kill_group(proc)
            stderr = _read(err)
        if code is None:
            self.warn(f"warning: {label} timed out after {hook.timeout:g}s (killed); going on")
        elif code == 127:
            self.warn(f"warning: {label}: command not found ({_brief(stderr)}); going on")
        elif code < 0:
            self.warn(f"warning: {label} killed by signal {-code}; going on")
        elif code not in (0, BLOCK_EXIT):
            detail = f": {_brief(stderr)}" if stderr.strip() else ""
            self.warn(f"warning: {label} exited {code}{detail}; going on")
        return code, stderr


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(5)


def _read(handle: IO[bytes]) -> str:
    handle.seek(0)
    return handle.read(FEEDBACK_CAP * 4).decode(errors="replace")


def _brief(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
