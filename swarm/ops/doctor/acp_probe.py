"""`swarm doctor`'s look at an ACP agent of the registry (core.kinds `AcpAgent`): it is started
as swarm starts it (its launch arguments and fixed variables, a random value for each secret
one), in a throwaway HOME and directory (none of the user's settings or a checkout's files: no
plugin of a checkout runs), asked `initialize` and nothing more (no session), then its process
group ends. What it says (its name and version, its login methods) is one line; no answer in
time is said so.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import select
import signal
import subprocess
import tempfile
import time
from typing import Any

from swarm import settings
from swarm.core.kinds import TeammateKind
from swarm.core.text.terminal import visible_line

REQUEST = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
           "params": {"protocolVersion": 1, "clientInfo": {"name": "swarm-doctor", "version": "1"}}}


def initialize(kind: TeammateKind, exe: str) -> tuple[str | None, str | None]:
    """(what its `initialize` answer says, None) or (None, why there is none)."""
    agent = kind.acp
    if agent is None:
        return None, "not an ACP agent"
    mode = kind.own_mode("default")
    with tempfile.TemporaryDirectory(prefix="swarm-doctor-") as home:
        env = {"PATH": settings.raw("PATH") or "/usr/bin:/bin", "HOME": home, "TERM": "dumb",
               **{k: v.replace("{mode}", mode) for k, v in agent.env.items()},
               **{k: secrets.token_hex(16) for k in agent.secret_env}}
        argv = [exe, *(a.replace("{mode}", mode) for a in agent.args)]
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, env=env, cwd=home,
                                    start_new_session=True)
        except OSError as exc:
            return None, visible_line(exc.strerror or str(exc))
        try:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write((json.dumps(REQUEST) + "\n").encode())
            proc.stdin.flush()
            answer = _answer(proc.stdout.fileno(), time.monotonic() + settings.doctor_timeout())
        except OSError as exc:
            answer = {"error": {"message": exc.strerror or str(exc)}}
        finally:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)  # its own session: only what it started
            proc.wait()
    if answer is None:
        return None, f"`initialize` not answered in {settings.doctor_timeout():g}s"
    if "error" in answer:
        return None, visible_line(f"`initialize` failed: {answer['error'].get('message')}")[:160]
    return _said(answer.get("result") or {}), None


def _answer(fd: int, deadline: float) -> dict[str, Any] | None:
    buffer = b""
    while (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            break
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            with contextlib.suppress(ValueError):
                message = json.loads(line)
                if isinstance(message, dict) and message.get("id") == 0:
                    return message
    return None


def _said(result: dict[str, Any]) -> str:
    info = result.get("agentInfo") or {}
    name = " ".join(str(v) for v in (info.get("title") or info.get("name"), info.get("version"))
                    if v) or "answered"
    methods = [str(m.get("id")) for m in result.get("authMethods") or [] if isinstance(m, dict)]
    logins = f"; logins: {', '.join(methods)}" if methods else ""
    return visible_line(f"initialize: {name}{logins}")[:160]
