"""`swarm doctor` shows which agent CLIs (Claude Code, Codex, Gemini CLI) are
installed, their versions (from the real CLIs' `--version`), and whether each is logged in or
has a key, from the variables and files the CLIs document; never a credential's value."""

from __future__ import annotations

import json
import os
import stat
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from tests.support.agent_clis import PACKAGES, cli_path
from tests.system.cli.test_doctor import doctor

SECRET = "sk-ant-very-secret-value-123"
VERSIONS = {name: package.rsplit("@", 1)[1] for name, (package, _) in PACKAGES.items()}


def machine(tmp_path: Path, *clis: str) -> dict[str, str]:
    """A PATH with only the given real CLIs (and node, sh), and an empty HOME."""
    directory = tmp_path / "bin"
    directory.mkdir(exist_ok=True)
    for name in clis:
        (directory / name).symlink_to(cli_path(name))
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {"PATH": f"{directory}:/usr/bin:/bin", "HOME": str(home)}


def clis(env: dict[str, str], wait: float = 120.0) -> tuple[dict[str, Any], str]:
    """Doctor's rows and text; each CLI given `wait` seconds (a loaded machine starts node
    slowly: the default 10 s is for a person's machine)."""
    clean = {k: v for k, v in os.environ.items() if k not in (
        "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY",
        "CODEX_HOME", "CLAUDE_CONFIG_DIR", "CODEX_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN")}
    # Both at once: a CLI whose `--version` hangs costs each doctor its whole timeout.
    with ThreadPoolExecutor(2) as pool:
        proc, human = pool.map(lambda args: doctor(*args, env={
            **clean, **env, "SWARM_DOCTOR_TIMEOUT": str(wait)}), [("--json",), ()])
    assert proc.returncode == 0, proc.stderr
    rows = {row["executable"]: row for row in json.loads(proc.stdout)["agent_clis"]}
    return rows, human.stdout


# executable -> the teammate kind doctor names it by
KIND = {"claude": "claude-code", "codex": "codex", "gemini": "gemini"}


def line(text: str, name: str) -> str:
    return next(x for x in text.splitlines() if x[4:].startswith(f"agent CLI {KIND[name]}"))


def test_installed_clis_show_their_versions_and_how_each_is_signed_in(tmp_path: Path) -> None:
    env = machine(tmp_path, "claude", "codex", "gemini")
    home = Path(env["HOME"])
    (home / ".codex").mkdir()
    (home / ".codex" / "auth.json").write_text(json.dumps({"OPENAI_API_KEY": SECRET}))
    rows, text = clis({**env, "ANTHROPIC_API_KEY": SECRET})
    for name in ("claude", "codex", "gemini"):
        assert rows[name]["installed"] and VERSIONS[name] in rows[name]["version"], rows[name]
        assert VERSIONS[name] in line(text, name)
    assert rows["claude"]["signed_in"] == "key: ANTHROPIC_API_KEY"
    assert rows["codex"]["signed_in"] == f"logged in: {home}/.codex/auth.json"
    assert rows["gemini"]["signed_in"] is None
    assert line(text, "claude").startswith("ok  ") and "ANTHROPIC_API_KEY" in line(text, "claude")
    assert line(text, "gemini").startswith("--  ") and "not signed in" in line(text, "gemini")
    assert "GEMINI_API_KEY" in line(text, "gemini")  # what to set
    assert SECRET not in text and SECRET not in json.dumps(rows)


def test_logins_from_files_and_an_empty_key_is_no_key(tmp_path: Path) -> None:
    env = machine(tmp_path, "claude", "gemini")
    home = Path(env["HOME"])
    (home / ".claude").mkdir()
    (home / ".claude" / ".credentials.json").write_text("{}")
    (home / ".gemini").mkdir()
    (home / ".gemini" / "oauth_creds.json").write_text("{}")
    rows, text = clis({**env, "OPENAI_API_KEY": ""})
    assert rows["claude"]["signed_in"] == f"logged in: {home}/.claude/.credentials.json"
    assert rows["gemini"]["signed_in"] == f"logged in: {home}/.gemini/oauth_creds.json"
    assert rows["codex"] == {**rows["codex"], "installed": False, "version": None}
    assert line(text, "codex").startswith("--  ") and "not installed" in line(text, "codex")


def test_a_cli_whose_version_hangs_or_fails_is_shown_without_one(tmp_path: Path) -> None:
    env = machine(tmp_path)
    directory = Path(env["PATH"].split(":")[0])
    for name, body in (("claude", "sleep 60"), ("codex", "echo broken >&2; exit 3")):
        script = directory / name
        script.write_text(f"#!/bin/sh\n{body}\n")
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
    rows, text = clis({**env, "GEMINI_API_KEY": SECRET}, wait=2)
    assert rows["claude"]["installed"] and rows["claude"]["version"] is None
    assert "did not answer in 2s" in rows["claude"]["problem"]
    assert rows["codex"]["installed"] and rows["codex"]["version"] is None
    assert "exit 3" in rows["codex"]["problem"]
    assert rows["gemini"]["installed"] is False
    assert rows["gemini"]["signed_in"] == "key: GEMINI_API_KEY"  # a key, though not installed
    assert SECRET not in text
