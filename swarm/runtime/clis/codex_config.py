"""The user's own Codex config (`$CODEX_HOME/config.toml`, default `~/.codex/config.toml`),
and the config swarm lays over it for a teammate's thread (never written to the user's file).

What it says of the model API a Codex teammate uses: its provider (`model_provider`, or the one
of its `profile`), that provider's `base_url`, and the environment variables it names
(`env_key`, the values of `env_http_headers`). The registry of teammate kinds points here
(core.kinds `ModelApi.config`): the teammate's environment, its credential's proxy and `swarm
doctor` read the same. Read leniently: a file that does not parse says nothing (Codex reports it
itself).

The thread's config: swarm's MCP server (the team's server on this host: its `url` and the
member's token in `http_headers`, sent in the thread's start request over Codex's stdin, never
in a file or on a command line), the checkout's trust under `projects` (every directory
Codex may look it up by: the cwd and those above it, resolved too, and a worktree's main
checkout), and the user's provider served at swarm's proxy of its model API.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from swarm.core.kinds import ConfiguredApi
from swarm.core.trust.workspace import project_root
from swarm.runtime.clis.base import DriverSetup

BUILT_IN = "openai"  # its default provider: signed in with `codex login`


def config_file(environ: Mapping[str, str]) -> Path:
    home = environ.get("CODEX_HOME") or str(Path(environ.get("HOME") or Path.home()) / ".codex")
    return Path(home) / "config.toml"


def _table(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def configured_api(environ: Mapping[str, str] | None = None) -> ConfiguredApi:
    env = os.environ if environ is None else environ
    try:
        config = tomllib.loads(config_file(env).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return ConfiguredApi()
    profile = _table(_table(config.get("profiles")).get(str(config.get("profile"))))
    provider = profile.get("model_provider") or config.get("model_provider") or BUILT_IN
    entry = _table(_table(config.get("model_providers")).get(provider))
    if not isinstance(provider, str) or not entry:
        return ConfiguredApi()  # a built-in provider: its own sign-in
    names = [entry.get("env_key"), *_table(entry.get("env_http_headers")).values()]
    base = entry.get("base_url")
    return ConfiguredApi(provider=provider, base_url=base if isinstance(base, str) else None,
                         variables=tuple(n for n in names if isinstance(n, str) and n))


def trust_directories(cwd: Path, trusted: bool) -> list[str]:
    """Every directory Codex may look the checkout's trust up by: the cwd and those above it (up
    to the project root when trusted: nothing above it is the checkout's), as written and
    resolved, and for a worktree its main checkout."""
    found: list[Path] = []
    for start in dict.fromkeys((cwd, cwd.resolve())):
        root = project_root(start)
        for directory in (start, *start.parents):
            found.append(directory)
            main = main_checkout(directory)
            if main is not None:
                found.append(main)
            if trusted and directory == root:
                break
    return list(dict.fromkeys(str(d) for d in found))


def main_checkout(directory: Path) -> Path | None:
    """A git worktree's main checkout (its `.git` file names the worktree's git directory,
    whose `commondir` is the main one's `.git`); None for anything else."""
    try:
        line = (directory / ".git").read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not line.startswith("gitdir:"):
        return None
    gitdir = (directory / line.partition(":")[2].strip()).resolve()
    try:
        common = (gitdir / "commondir").read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None
    return (gitdir / common).resolve().parent


def thread_config(setup: DriverSetup, trusted: bool, server: str) -> dict[str, Any]:
    """The thread's config, over the user's own: swarm's MCP server (named `server`), the
    checkout's trust, and the user's provider served at swarm's proxy of its model API (its
    key stays with swarm)."""
    level = "trusted" if trusted else "untrusted"
    if setup.team_server is not None:  # the team's server on this host, the token in a header
        hub = setup.team_server()
        where: dict[str, Any] = {"url": hub.url, "http_headers": hub.headers()}
    else:
        where = {"command": setup.mcp_server[0], "args": setup.mcp_server[1:],
                 "env": setup.mcp_env}
    config: dict[str, Any] = {
        "mcp_servers": {server: {**where, "required": True,
                                 "default_tools_approval_mode": "approve"}},
        "projects": {d: {"trust_level": level} for d in trust_directories(setup.cwd, trusted)}}
    if setup.model_url and setup.provider:
        config["model_providers"] = {setup.provider: {"base_url": setup.model_url}}
    return config
