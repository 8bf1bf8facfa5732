"""The agent CLIs of the registry of teammate kinds (core.kinds), for `swarm doctor`: on PATH or
not, their `--version` (an ACP agent's `initialize` too: ops.doctor.acp_probe), and whether
each is signed in, judged from the variables and files each
kind's entry names and those its own config names (a Codex provider's `env_key`). Never a
credential's value: only its name or the file's path.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from swarm import settings
from swarm.core.kinds import TeammateKind, agent_clis, load
from swarm.core.text.terminal import visible_line
from swarm.ops.doctor.acp_probe import initialize


def signed_in(kind: TeammateKind) -> str | None:
    """'key: NAME', 'logged in: PATH', or None. Names and paths only, never values."""
    api = kind.model_api
    configured = load(api.config)(os.environ).variables if api and api.config else ()
    for key in (*kind.credentials, *configured):  # documented, or named in its own config
        if settings.raw(key):
            return f"key: {key}"
    home = kind.user_home
    if home is None:
        return None
    configured = settings.raw(home.variable) if home.variable else None
    directory = Path(configured) if configured else Path.home() / home.default
    for name in home.login_files:
        if (directory / name).is_file():
            return f"logged in: {directory / name}"
    if home.dotenv and _dotenv_has(directory / ".env", kind.credentials):  # documented too
        return f"key: in {directory / '.env'}"
    return None


def _dotenv_has(path: Path, keys: tuple[str, ...]) -> bool:
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return False
    for raw in lines:
        name, sep, value = raw.strip().removeprefix("export ").partition("=")
        if sep and name.strip() in keys and value.strip().strip("'\""):
            return True
    return False


def version(exe: str) -> tuple[str | None, str | None]:
    """(the first line of `exe --version`, None) or (None, why not). A private, minimal
    environment (PATH, a throwaway HOME: no keys, none of the user's settings) and a short
    timeout; the whole process group goes at the end."""
    with tempfile.TemporaryDirectory(prefix="swarm-doctor-") as home:
        env = {"PATH": settings.raw("PATH") or "/usr/bin:/bin", "HOME": home,
               "NO_COLOR": "1", "TERM": "dumb"}
        try:
            proc = subprocess.Popen([exe, "--version"], stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                    cwd=home, start_new_session=True, text=True,
                                    errors="replace")
        except OSError as exc:
            return None, visible_line(exc.strerror or str(exc))
        try:
            out, err = proc.communicate(timeout=settings.doctor_timeout())
        except subprocess.TimeoutExpired:
            out, err = "", ""
            problem: str | None = f"`--version` did not answer in {settings.doctor_timeout():g}s"
        else:
            problem = None
        finally:
            _end_group(proc)
    if problem is None and proc.returncode != 0:
        why = visible_line((err.strip().splitlines() or [""])[-1])[:120]
        problem = f"`--version` failed (exit {proc.returncode}){': ' + why if why else ''}"
    first = next((line.strip() for line in out.splitlines() if line.strip()), "")
    if problem is None and not first:
        problem = "`--version` printed nothing"
    return (visible_line(first)[:80] or None) if problem is None else None, problem


def _end_group(proc: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # its own session: only what it started
    proc.wait()


def check_agent_clis() -> list[dict[str, Any]]:
    """One row per CLI: name, title, path, installed, version, problem, signed_in, hint."""

    def one(kind: TeammateKind) -> dict[str, Any]:
        exe = shutil.which(kind.executable) if kind.executable else None
        found, problem = version(exe) if exe else (None, None)
        row = {"name": kind.name, "title": kind.title, "executable": kind.executable,
               "path": exe, "installed": exe is not None, "version": found,
               "problem": problem, "signed_in": signed_in(kind), "hint": kind.sign_in_hint,
               "install": kind.install_hint()}
        if kind.acp is not None and exe:  # an ACP agent: does it answer `initialize`?
            row["initialize"], row["initialize_problem"] = initialize(kind, exe)
        return row

    clis = [k for k in agent_clis() if not k.anonymous]  # `--agent acp -- CMD`: no CLI to check
    with ThreadPoolExecutor(max_workers=len(clis)) as pool:  # each may take seconds
        return list(pool.map(one, clis))


def agent_cli_lines(rows: list[dict[str, Any]]) -> list[str]:
    lines = []
    for row in rows:
        head = f"agent CLI {row['name']}"
        if not row["installed"]:
            state = f"not installed (install it: {row['install']})"
            if row["signed_in"]:
                state += f" ({row['signed_in']})"
            lines.append(f"--  {head}: {state}")
            continue
        what = row["version"] or f"version unknown: {row['problem']}"
        sign = row["signed_in"] or f"not signed in ({row['hint']})"
        ok = row["signed_in"] and row["version"]
        said = row.get("initialize") or row.get("initialize_problem")
        ok = ok and not row.get("initialize_problem")
        lines.append(f"{'ok  ' if ok else '--  '}{head} ({row['title']}): {what}; {sign}"
                     + (f"; {said}" if said else ""))
    return lines
