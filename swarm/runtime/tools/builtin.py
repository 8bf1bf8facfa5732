"""The file and shell tools a teammate has: Read, Write, Edit, Bash, Glob, Grep.

A tool never raises into the loop: every failure becomes an error result the model can read.
"""

from __future__ import annotations

import codecs
import contextlib
import fnmatch
import os
import re
import select
import stat
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from swarm.core.trust.child_env import command_env
from swarm.errors import ToolError
from swarm.runtime.process.kill import kill_tree
from swarm.runtime.tools.base import OUTPUT_CAP, Tool, ToolContext, ToolResult

if TYPE_CHECKING:
    from swarm.runtime.tools.builtin_inputs import (
        BashInput,
        EditInput,
        GlobInput,
        GrepInput,
        ReadInput,
        WriteInput,
    )

BASH_DEFAULT_TIMEOUT = 120.0
BASH_MAX_TIMEOUT = 600.0
KILLED_DRAIN = 2.0  # seconds to read what a command killed at its timeout had written
READ_LIMIT_LINES = 2000
READ_MAX_BYTES = 2 * 1024 * 1024  # one Read returns at most this much of a file (and says so)


def _cap(text: str) -> str:
    if len(text) <= OUTPUT_CAP:
        return text
    return text[:OUTPUT_CAP] + f"\n... [output truncated: {len(text) - OUTPUT_CAP} more characters]"


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


class Read(Tool):
    name = "Read"
    description = "Read a text file. Returns numbered lines; use offset/limit for large files."
    input_ref = "swarm.runtime.tools.builtin_inputs:ReadInput"
    read_only = True

    def run(self, args: ReadInput, ctx: ToolContext) -> ToolResult:
        path = ctx.resolve(args.file_path)
        start = max(args.offset or 1, 1)
        limit = args.limit or READ_LIMIT_LINES
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


def replace_file(path: Path, text: str) -> None:
    """Give `path` its new content in one rename (a temporary file beside it first), so a peer
    or a person reading it meanwhile gets the old content or the new, never a part. A symlink
    is written through (its target is replaced, the link stays); an existing file keeps its
    mode, a new one gets 0666 less the umask, as open() would give it."""
    target = Path(os.path.realpath(path))
    try:
        mode: int | None = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = None
    tmp = target.with_name(f".{target.name}.swarm-{os.getpid()}-{time.monotonic_ns()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 if mode is None else 0o600)
    try:
        with os.fdopen(fd, "w") as out:
            if mode is not None:
                os.fchmod(out.fileno(), mode)
            out.write(text)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


class Write(Tool):
    name = "Write"
    description = "Write a file (creating parent directories), replacing its content."
    input_ref = "swarm.runtime.tools.builtin_inputs:WriteInput"
    edits_files = True

    def run(self, args: WriteInput, ctx: ToolContext) -> ToolResult:
        path = ctx.resolve(args.file_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_file(path, args.content)
        return ToolResult(f"wrote {len(args.content)} characters to {path}")

    def describe(self, args: dict[str, Any]) -> str:
        return f"Write {args.get('file_path')}"


class Edit(Tool):
    name = "Edit"
    description = ("Replace old_string with new_string in a file. old_string must occur exactly once"
                   " unless replace_all is true.")
    input_ref = "swarm.runtime.tools.builtin_inputs:EditInput"
    edits_files = True

    def run(self, args: EditInput, ctx: ToolContext) -> ToolResult:
        path = ctx.resolve(args.file_path)
        try:
            text = path.read_text()
        except FileNotFoundError:
            raise ToolError(f"file not found: {path}") from None
        old, new, every = args.old_string, args.new_string, bool(args.replace_all)
        count = text.count(old) if old else 0
        if count == 0:
            raise ToolError("old_string was not found in the file")
        if count > 1 and not every:
            raise ToolError(f"old_string occurs {count} times; give more context or replace_all")
        replace_file(path, text.replace(old, new) if every else text.replace(old, new, 1))
        return ToolResult(f"edited {path} ({count if every else 1} replacement(s))")

    def describe(self, args: dict[str, Any]) -> str:
        return f"Edit {args.get('file_path')}"


class Bash(Tool):
    name = "Bash"
    description = ("Run a shell command in the agent's working directory (bash -c). Output is"
                   f" capped at {OUTPUT_CAP} characters; timeout in seconds (default"
                   f" {int(BASH_DEFAULT_TIMEOUT)}, at most {int(BASH_MAX_TIMEOUT)}).")
    input_ref = "swarm.runtime.tools.builtin_inputs:BashInput"

    def run(self, args: BashInput, ctx: ToolContext) -> ToolResult:
        command = args.command
        timeout = min(args.timeout or BASH_DEFAULT_TIMEOUT, BASH_MAX_TIMEOUT)
        proc = subprocess.Popen(
            ["bash", "-c", command], cwd=ctx.cwd, env={**user_env(), **ctx.env},
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: an interrupt kills the whole tree
        )
        ctx.host.track_process(proc)
        try:
            out, timed_out = _collect(proc, timeout, ctx.output)
        finally:
            ctx.host.track_process(None)
        text = out.decode(errors="replace")
        if timed_out:
            raise ToolError(_cap(f"{text}\ncommand timed out after {timeout:g}s"))
        if proc.returncode < 0:
            raise ToolError(_cap(f"{text}\ncommand killed by signal {-proc.returncode}"))
        if proc.returncode:
            return ToolResult(_cap(f"{text}\n[exit code {proc.returncode}]"), is_error=True)
        return ToolResult(_cap(text) if text else "(no output)")

    def describe(self, args: dict[str, Any]) -> str:
        return f"Bash: {args.get('command')}"


def _collect(proc: subprocess.Popen[bytes], timeout: float,
             output: Callable[[str], None] | None) -> tuple[bytes, bool]:
    """The command's output, read as it comes (each piece handed to `output`, decoded whole
    characters only), until it ends or `timeout`: then its tree is killed (True)."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    timed_out = False
    with proc.stdout:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 and timed_out:
                break  # killed, and something it started still holds the pipe: leave it
            if left <= 0:
                timed_out = True
                kill_tree(proc)
                deadline = time.monotonic() + KILLED_DRAIN  # what it had written still counts
                continue
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            data = os.read(fd, 65536)
            if not data:
                break
            chunks.append(data)
            if output is not None and (text := decoder.decode(data)):
                output(text)
    if output is not None and (rest := decoder.decode(b"", final=True)):
        output(rest)
    try:  # stdout closed early (or only a child kept it): the command itself may still run
        proc.wait(timeout=max(deadline - time.monotonic(), 0.0) + (KILLED_DRAIN * timed_out))
    except subprocess.TimeoutExpired:
        kill_tree(proc)
        proc.wait()
        timed_out = True
    return b"".join(chunks), timed_out


def user_env() -> dict[str, str]:
    """A Bash command's environment: the agent's, minus the model-provider credentials."""
    return command_env(os.environ)


class Glob(Tool):
    name = "Glob"
    description = "List files matching a glob pattern (e.g. **/*.py), relative to path or the cwd."
    input_ref = "swarm.runtime.tools.builtin_inputs:GlobInput"
    read_only = True

    def run(self, args: GlobInput, ctx: ToolContext) -> ToolResult:
        base = ctx.resolve(args.path or ".")
        matches = sorted(str(p.relative_to(base)) for p in base.glob(args.pattern)
                         if ".git" not in p.parts)
        return ToolResult(_cap("\n".join(matches)) if matches else "(no matches)")


class Grep(Tool):
    name = "Grep"
    description = "Search file contents for a regular expression; returns path:line:text."
    input_ref = "swarm.runtime.tools.builtin_inputs:GrepInput"
    read_only = True

    def run(self, args: GrepInput, ctx: ToolContext) -> ToolResult:
        try:
            regex = re.compile(args.pattern)
        except re.error as exc:
            raise ToolError(f"invalid regular expression: {exc}") from None
        base = ctx.resolve(args.path or ".")
        pattern = args.glob or "*"
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
