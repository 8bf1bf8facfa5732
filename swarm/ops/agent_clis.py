"""The agent CLIs an MCP client of `swarm mcp serve` may be (Claude Code, Codex, Gemini CLI),
for `swarm doctor`: on PATH or not, their `--version`, and whether each is signed in, judged
from the variables and files the CLIs document. Never a credential's value: only its name or
the file's path.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from swarm import settings
from swarm.core.text.terminal import visible_line

VERSION_TIMEOUT_S = 10.0  # a CLI that has not answered `--version` by then is reported so


@dataclass(frozen=True)
class AgentCli:
    name: str
    title: str
    keys: tuple[str, ...]  # variables that sign it in (any one, non-empty)
    home_var: str | None  # the variable that moves its configuration directory
    home_dir: str  # that directory's default, under HOME
    login_files: tuple[str, ...]  # files a login leaves there
    hint: str  # how to sign in


AGENT_CLIS = (
    AgentCli("claude", "Claude Code",
             ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
              "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX"),
             "CLAUDE_CONFIG_DIR", ".claude", (".credentials.json",),
             "set ANTHROPIC_API_KEY or run `claude` and /login"),
    AgentCli("codex", "Codex", ("OPENAI_API_KEY", "CODEX_API_KEY"), "CODEX_HOME", ".codex",
             ("auth.json",), "set OPENAI_API_KEY or run `codex login`"),
    AgentCli("gemini", "Gemini CLI",
             ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"), None,
             ".gemini", ("oauth_creds.json",),
             "set GEMINI_API_KEY or run `gemini` to log in"),
)


def signed_in(cli: AgentCli) -> str | None:
    """'key: NAME', 'logged in: PATH', or None. Names and paths only, never values."""
    for key in cli.keys:
        if settings.raw(key):
            return f"key: {key}"
    configured = settings.raw(cli.home_var) if cli.home_var else None
    directory = Path(configured) if configured else Path.home() / cli.home_dir
    for name in cli.login_files:
        if (directory / name).is_file():
            return f"logged in: {directory / name}"
    if cli.name == "gemini" and _dotenv_has(directory / ".env", cli.keys):  # documented too
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
            out, err = proc.communicate(timeout=VERSION_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            out, err = "", ""
            problem: str | None = f"`--version` did not answer in {VERSION_TIMEOUT_S:.0f}s"
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

    def one(cli: AgentCli) -> dict[str, Any]:
        exe = shutil.which(cli.name)
        found, problem = version(exe) if exe else (None, None)
        return {**asdict(cli), "path": exe, "installed": exe is not None, "version": found,
                "problem": problem, "signed_in": signed_in(cli)}

    with ThreadPoolExecutor(max_workers=len(AGENT_CLIS)) as pool:  # each may take seconds
        rows = list(pool.map(one, AGENT_CLIS))
    for row in rows:
        for key in ("keys", "home_var", "home_dir", "login_files"):
            row.pop(key)
    return rows


def agent_cli_lines(rows: list[dict[str, Any]]) -> list[str]:
    lines = []
    for row in rows:
        head = f"agent CLI {row['name']}"
        if not row["installed"]:
            state = "not installed"
            if row["signed_in"]:
                state += f" ({row['signed_in']})"
            lines.append(f"--  {head}: {state}")
            continue
        what = row["version"] or f"version unknown: {row['problem']}"
        sign = row["signed_in"] or f"not signed in ({row['hint']})"
        ok = row["signed_in"] and row["version"]
        lines.append(f"{'ok  ' if ok else '--  '}{head} ({row['title']}): {what}; {sign}")
    return lines
