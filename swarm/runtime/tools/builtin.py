"""The file and shell tools a teammate has: Read, Write, Edit, Bash, Glob, Grep.

A tool never raises into the loop: every failure becomes an error result the model can read.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import re
import signal
import stat
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from swarm.core.child_env import command_env
from swarm.errors import ToolError
from swarm.runtime.interfaces import NoHost, ToolHost

if TYPE_CHECKING:
    from swarm.core.team import Team
    from swarm.runtime.subagents.runner import Subagents

OUTPUT_CAP = 30_000
BASH_DEFAULT_TIMEOUT = 120.0
BASH_MAX_TIMEOUT = 600.0
READ_LIMIT_LINES = 2000
READ_MAX_BYTES = 2 * 1024 * 1024  # one Read returns at most this much of a file (and says so)


@dataclass
class ToolResult:
    content: str
    is_error: bool = False


@dataclass
class ToolContext:
    team: Team
    name: str
    cwd: Path
    env: dict[str, str] = field(default_factory=dict)
    host: ToolHost = field(default_factory=NoHost)  # the agent the tool runs in
    subagents: Subagents | None = None  # the Agent tools' runner; None in a subagent

    def resolve(self, raw: str) -> Path:
        path = Path(os.path.expanduser(raw))
        return path if path.is_absolute() else self.cwd / path


class Tool:
    name: str = ""
    description: str = ""
    input_schema: dict[str, Any] = {}
    read_only: bool = False
    edits_files: bool = False

    def spec(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description,
                "input_schema": self.input_schema}

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raise NotImplementedError

    def check_input(self, args: dict[str, Any]) -> None:
        """Raise ToolError for input the tool cannot take: the loop asks before any permission
        check, so nobody is asked about a call that cannot run as shown."""

    def describe(self, args: dict[str, Any]) -> str:
        """One line for a permission request."""
        return f"{self.name}({_brief(args)})"


def _brief(args: dict[str, Any]) -> str:
    first = next(iter(args.values()), "") if args else ""
    text = str(first).replace("\n", " ")
    return text if len(text) <= 120 else text[:117] + "..."


def file_path_of(args: dict[str, Any]) -> str:
    """Read, Write and Edit take their file from `file_path` only: a non-empty string. (A
    `path` beside a falsy `file_path` once passed the scope check and wrote a file named `0`.)"""
    if "file_path" not in args:
        raise ToolError("missing required input 'file_path'")
    value = args["file_path"]
    if not isinstance(value, str) or not value.strip():
        raise ToolError("file_path must be a non-empty string: the path of the file")
    return value


class FileTool(Tool):
    """Read, Write, Edit: one file, named by `file_path`."""

    def check_input(self, args: dict[str, Any]) -> None:
        file_path_of(args)


def _cap(text: str) -> str:
    if len(text) <= OUTPUT_CAP:
        return text
    return text[:OUTPUT_CAP] + f"\n... [output truncated: {len(text) - OUTPUT_CAP} more characters]"


def _schema(required: list[str], **props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required}


def open_regular(path: Path) -> BinaryIO:
    """Open a regular file to read. FIFOs, devices and sockets are refused: a FIFO blocks the
    open forever (no interrupt reaches it), /dev/zero never ends. O_NONBLOCK: a FIFO swapped in
    after the stat cannot block either."""
    try:
        mode = os.stat(path).st_mode
        if stat.S_ISDIR(mode):
            raise ToolError(f"{path} is a directory; use Glob to list it")
        if stat.S_ISREG(mode):
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
            mode = os.fstat(fd).st_mode
            if stat.S_ISREG(mode):
                return os.fdopen(fd, "rb")
            os.close(fd)
    except FileNotFoundError:
        raise ToolError(f"file not found: {path}") from None
    kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a character device"
            if stat.S_ISCHR(mode) else "a block device" if stat.S_ISBLK(mode) else "a socket"
            if stat.S_ISSOCK(mode) else "not a regular file")
    raise ToolError(f"{path} is {kind}, not a regular file: Read reads regular files only")


class Read(FileTool):
    name = "Read"
    description = "Read a text file. Returns numbered lines; use offset/limit for large files."
    input_schema = _schema(["file_path"], file_path={"type": "string"},
                           offset={"type": "integer"}, limit={"type": "integer"})
    read_only = True

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path = ctx.resolve(file_path_of(args))
        start = max(int(args.get("offset") or 1), 1)
        limit = int(args.get("limit") or READ_LIMIT_LINES)
        chosen: list[str] = []
        number, used, at_line_start, resume = 0, 0, True, 0
        with open_regular(path) as handle:
            while len(chosen) < limit:
                # Bounded reads: one endless line cannot fill memory.
                chunk = handle.readline(READ_MAX_BYTES + 1)
                if not chunk:
                    break
                number += at_line_start
                at_line_start = chunk.endswith(b"\n")
                if number < start:
                    continue  # skipping to offset: read and dropped
                if used + len(chunk) > READ_MAX_BYTES:
                    if not chosen:  # a single line longer than the cap: its head
                        chosen.append(chunk[:READ_MAX_BYTES].decode(errors="replace"))
                    resume = number + (len(chosen) == 1 and used == 0)
                    break
                used += len(chunk)
                chosen.append(chunk.decode(errors="replace").rstrip("\n").removesuffix("\r"))
        body = "\n".join(f"{n:6}\t{line}" for n, line in enumerate(chosen, start))
        result = _cap(body) if body else "(empty file)"
        if resume:
            result += (f"\n[file truncated at {READ_MAX_BYTES // 2**20} MiB: read on with offset"
                       f" {resume} or use Grep]")
        return ToolResult(result)

    def describe(self, args: dict[str, Any]) -> str:
        return f"Read {args.get('file_path')}"


class Write(FileTool):
    name = "Write"
    description = "Write a file (creating parent directories), replacing its content."
    input_schema = _schema(["file_path", "content"], file_path={"type": "string"},
                           content={"type": "string"})
    edits_files = True

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path = ctx.resolve(file_path_of(args))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(str(args["content"]))
        return ToolResult(f"wrote {len(str(args['content']))} characters to {path}")

    def describe(self, args: dict[str, Any]) -> str:
        return f"Write {args.get('file_path')}"


class Edit(FileTool):
    name = "Edit"
    description = ("Replace old_string with new_string in a file. old_string must occur exactly once"
                   " unless replace_all is true.")
    input_schema = _schema(["file_path", "old_string", "new_string"],
                           file_path={"type": "string"}, old_string={"type": "string"},
                           new_string={"type": "string"}, replace_all={"type": "boolean"})
    edits_files = True

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path = ctx.resolve(file_path_of(args))
        try:
            text = path.read_text()
        except FileNotFoundError:
            raise ToolError(f"file not found: {path}") from None
        old, new = str(args["old_string"]), str(args["new_string"])
        count = text.count(old) if old else 0
        if count == 0:
            raise ToolError("old_string was not found in the file")
        if count > 1 and not args.get("replace_all"):
            raise ToolError(f"old_string occurs {count} times; give more context or replace_all")
        path.write_text(text.replace(old, new) if args.get("replace_all") else text.replace(old, new, 1))
        return ToolResult(f"edited {path} ({count if args.get('replace_all') else 1} replacement(s))")

    def describe(self, args: dict[str, Any]) -> str:
        return f"Edit {args.get('file_path')}"


class Bash(Tool):
    name = "Bash"
    description = ("Run a shell command in the agent's working directory (bash -c). Output is"
                   f" capped at {OUTPUT_CAP} characters; timeout in seconds (default"
                   f" {int(BASH_DEFAULT_TIMEOUT)}, at most {int(BASH_MAX_TIMEOUT)}).")
    input_schema = _schema(["command"], command={"type": "string"}, timeout={"type": "number"},
                           description={"type": "string"})

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        command = str(args["command"])
        timeout = min(float(args.get("timeout") or BASH_DEFAULT_TIMEOUT), BASH_MAX_TIMEOUT)
        proc = subprocess.Popen(
            ["bash", "-c", command], cwd=ctx.cwd, env={**user_env(), **ctx.env},
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: an interrupt kills the whole tree
        )
        ctx.host.track_process(proc)
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_tree(proc)
            out, _ = proc.communicate()
            text = out.decode(errors="replace")
            raise ToolError(_cap(f"{text}\ncommand timed out after {timeout:g}s")) from None
        finally:
            ctx.host.track_process(None)
        text = out.decode(errors="replace")
        if proc.returncode < 0:
            raise ToolError(_cap(f"{text}\ncommand killed by signal {-proc.returncode}"))
        if proc.returncode:
            return ToolResult(_cap(f"{text}\n[exit code {proc.returncode}]"), is_error=True)
        return ToolResult(_cap(text) if text else "(no output)")

    def describe(self, args: dict[str, Any]) -> str:
        return f"Bash: {args.get('command')}"


def user_env() -> dict[str, str]:
    """A Bash command's environment: the agent's, minus the model-provider credentials."""
    return command_env(os.environ)


def kill_tree(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


class Glob(Tool):
    name = "Glob"
    description = "List files matching a glob pattern (e.g. **/*.py), relative to path or the cwd."
    input_schema = _schema(["pattern"], pattern={"type": "string"}, path={"type": "string"})
    read_only = True

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        base = ctx.resolve(str(args.get("path") or "."))
        matches = sorted(str(p.relative_to(base)) for p in base.glob(str(args["pattern"]))
                         if ".git" not in p.parts)
        return ToolResult(_cap("\n".join(matches)) if matches else "(no matches)")


class Grep(Tool):
    name = "Grep"
    description = "Search file contents for a regular expression; returns path:line:text."
    input_schema = _schema(["pattern"], pattern={"type": "string"}, path={"type": "string"},
                           glob={"type": "string"})
    read_only = True

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            regex = re.compile(str(args["pattern"]))
        except re.error as exc:
            raise ToolError(f"invalid regular expression: {exc}") from None
        base = ctx.resolve(str(args.get("path") or "."))
        pattern = str(args.get("glob") or "*")
        files = [base] if base.is_file() else sorted(p for p in base.rglob("*") if p.is_file())
        hits: list[str] = []
        for path in files:
            if ".git" in path.parts or not fnmatch.fnmatch(path.name, pattern):
                continue
            try:
                with open_regular(path) as handle:  # skips FIFOs, devices, sockets
                    text = handle.read().decode()
            except (ToolError, UnicodeDecodeError, OSError):
                continue
            for number, line in enumerate(text.splitlines(), 1):
                if regex.search(line):
                    hits.append(f"{path}:{number}:{line}")
            if sum(len(h) for h in hits) > OUTPUT_CAP:
                break
        return ToolResult(_cap("\n".join(hits)) if hits else "(no matches)")
