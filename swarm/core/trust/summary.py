"""What a project's configuration would do, as data: each hook command, each MCP server command,
each agent definition with its mode, tools and servers. `swarm trust` and the interactive lead's
question show it before the user trusts the project (the CLI renders it, escaped).

The files are read leniently, from the same bytes the trust digest was made of: the summary
must show every command a file carries, also those swarm's own loaders would reject or do not
run (Claude Code's events in `.claude/settings.json`), since trusting covers the whole file.
"""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from swarm.core.trust.front_matter import field_name, front_matter
from swarm.core.trust.workspace import ConfigFile, ProjectConfig

# Where a settings file lists MCP servers: `mcpServers` (JSON), `mcp_servers` (Codex's TOML).
SERVER_KEYS = ("mcpServers", "mcp_servers")
# A key whose value is a command the CLI runs: `command`, `discoveryCommand`, `apiKeyHelper`,
# `notify`, `awsAuthRefresh`, ...
COMMAND_KEY = re.compile(r"(?i)(^command$|command$|helper$|^notify$|^awsauthrefresh$|"
                         r"^awscredentialexport$)")


class HookItem(BaseModel):
    model_config = ConfigDict(defer_build=True)

    file: str
    event: str
    matcher: str | None = None
    command: str


class ServerItem(BaseModel):
    model_config = ConfigDict(defer_build=True)

    file: str
    name: str
    command: str | None = None  # the command line a stdio server starts with
    url: str | None = None
    env: dict[str, str] = Field(default_factory=dict)  # as written (`${VAR}` not expanded)


class DefinitionItem(BaseModel):
    model_config = ConfigDict(defer_build=True)

    file: str
    name: str
    permission_mode: str | None = None
    tools: list[str] | None = None  # None: every tool
    disallowed_tools: list[str] = Field(default_factory=list)
    mcp_servers: list[str] = Field(default_factory=list)
    model: str | None = None


class VariableItem(BaseModel):
    model_config = ConfigDict(defer_build=True)

    file: str
    name: str  # a variable the file sets for its agent CLI (never its value)


class TrustSummary(BaseModel):
    model_config = ConfigDict(defer_build=True)

    root: str | None
    digest: str
    files: list[str]
    hooks: list[HookItem] = Field(default_factory=list)
    servers: list[ServerItem] = Field(default_factory=list)
    definitions: list[DefinitionItem] = Field(default_factory=list)
    variables: list[VariableItem] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list)  # files whose content cannot be shown


def summarize(config: ProjectConfig) -> TrustSummary:
    summary = TrustSummary(root=str(config.root) if config.root else None,
                           digest=config.digest(), files=config.names())
    for file in config.files:
        if file.kind == "script" or file.format == "text":  # listed in `files`: a script runs
            continue  # by a command shown below; skills and commands are prompt text
        try:
            text = file.text()
        except (OSError, UnicodeDecodeError) as exc:
            summary.problems.append(f"{file.relative}: cannot be read ({exc})")
            continue
        if file.format == "markdown":
            _definition(file, text, summary)
        elif file.format == "dotenv":
            summary.variables.extend(VariableItem(file=file.relative, name=name)
                                     for name in _dotenv_names(text))
        else:
            _settings(file, text, summary)
    return summary


def _settings(file: ConfigFile, text: str, summary: TrustSummary) -> None:
    """A JSON or TOML settings file: its hooks, its MCP servers, and any other command it
    carries (Gemini CLI's tool discovery, Claude Code's helpers, Codex's notify)."""
    try:
        data = (tomllib.loads(text) if file.format == "toml" else json.loads(text)) \
            if text.strip() else {}
    except json.JSONDecodeError as exc:
        summary.problems.append(f"{file.relative}: not valid JSON ({exc.msg}, line"
                                f" {exc.lineno}): what it would do cannot be shown")
        return
    except tomllib.TOMLDecodeError as exc:
        summary.problems.append(f"{file.relative}: not valid TOML ({exc}): what it would do"
                                " cannot be shown")
        return
    if not isinstance(data, dict):
        summary.problems.append(f"{file.relative}: not a {file.format.upper()} object")
        return
    summary.hooks.extend(_hooks(data.get("hooks"), file.relative))
    for key in SERVER_KEYS:
        summary.servers.extend(_servers(data.get(key), file.relative))
    rest = {k: v for k, v in data.items() if k not in ("hooks", *SERVER_KEYS)}
    summary.hooks.extend(HookItem(file=file.relative, event=where, command=command)
                         for where, command in _commands(rest, ""))


def _commands(value: Any, where: str) -> list[tuple[str, str]]:
    """(key path, command) for every value under a key that names a command."""
    found: list[tuple[str, str]] = []
    if isinstance(value, dict):
        for key, inner in value.items():
            path = f"{where}.{key}" if where else str(key)
            if COMMAND_KEY.search(str(key)) and isinstance(inner, (str, list)):
                found.append((path, inner if isinstance(inner, str)
                              else shlex.join(map(str, inner))))
            else:
                found.extend(_commands(inner, path))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            found.extend(_commands(inner, f"{where}[{index}]"))
    return found


def _dotenv_names(text: str) -> list[str]:
    names = []
    for raw in text.splitlines():
        name, sep, _ = raw.strip().removeprefix("export ").partition("=")
        if sep and name.strip() and not name.startswith("#"):
            names.append(name.strip())
    return names


def _hooks(value: Any, file: str) -> list[HookItem]:
    """Every command under `hooks`, in either spelling (flat, or Claude Code's nested)."""
    items: list[HookItem] = []
    if not isinstance(value, dict):
        return items
    for event, entries in value.items():
        for entry in entries if isinstance(entries, list) else [entries]:
            if not isinstance(entry, dict):
                continue
            matcher = entry.get("matcher") if isinstance(entry.get("matcher"), str) else None
            inner = entry.get("hooks")
            for one in [entry, *(inner if isinstance(inner, list) else [])]:
                if isinstance(one, dict) and isinstance(one.get("command"), str):
                    items.append(HookItem(file=file, event=str(event), matcher=matcher,
                                          command=one["command"]))
    return items


def _servers(value: Any, file: str) -> list[ServerItem]:
    items: list[ServerItem] = []
    if not isinstance(value, dict):
        return items
    for name, spec in value.items():
        if not isinstance(spec, dict):
            continue
        command = spec.get("command")
        args: list[Any] = spec["args"] if isinstance(spec.get("args"), list) else []
        env: dict[Any, Any] = spec["env"] if isinstance(spec.get("env"), dict) else {}
        items.append(ServerItem(
            file=file, name=str(name),
            command=shlex.join([str(command), *map(str, args)]) if command is not None else None,
            url=str(spec["url"]) if spec.get("url") is not None else None,
            env={str(k): str(v) for k, v in env.items()}))
    return items


def _names(value: Any) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, list):
        return [str(v) if not isinstance(v, dict) else ", ".join(map(str, v)) for v in value]
    return [str(value)]


def _definition(file: ConfigFile, text: str, summary: TrustSummary) -> None:
    split = front_matter(text, file.relative)
    if not isinstance(split, tuple):
        summary.problems.append(str(split))
        return
    meta = {field_name(str(k)): v for k, v in split[0].items()}
    servers = meta.get("mcp_servers")
    inline = [servers] if isinstance(servers, dict) else (
        [s for s in servers if isinstance(s, dict)] if isinstance(servers, list) else [])
    for spec in inline:  # a definition may start servers of its own
        summary.servers.extend(_servers(spec, file.relative))
    summary.hooks.extend(_hooks(meta.get("hooks"), file.relative))
    mode = meta.get("permission_mode")
    summary.definitions.append(DefinitionItem(
        file=file.relative, name=str(meta.get("name") or file.path.stem),
        permission_mode=str(mode) if mode is not None else None, tools=_names(meta.get("tools")),
        disallowed_tools=_names(meta.get("disallowed_tools")) or [],
        mcp_servers=_names(servers if not isinstance(servers, dict) else list(servers)) or [],
        model=str(meta["model"]) if meta.get("model") is not None else None))
