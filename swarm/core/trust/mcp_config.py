"""MCP server configuration: `mcpServers` in `<project>/.mcp.json` and `$SWARM_HOME/mcp.json`.

Each entry is `{name: {"command": ..., "args": [...], "env": {...}}}` (a stdio server) or
`{name: {"url": ...}}` (streamable HTTP). The project file wins over the user file for the same
name. An agent gets servers by name (`spawn --mcp NAME`, a definition's `mcp_servers`) or inline
specs in its definition. A bad entry is one problem naming its file and field; the others load.
Values may use `${VAR}` or `${VAR:-default}`, expanded from the agent's environment when the
server starts (so `swarm mcp list` never prints a secret). The project's file counts only in a
trusted project (core/trust/workspace.py).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from swarm.core.records.base import Record
from swarm.core.store import paths
from swarm.core.trust.child_env import entry_env, expand
from swarm.core.trust.config_files import (
    ConfigProblem,
    problems_of,
    read_config_file,
    read_json_object,
)
from swarm.core.trust.workspace import ProjectConfig, decide

SERVER_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
TRANSPORTS = ("stdio", "http", "streamable-http")


def validate_server_name(name: str) -> str:
    if not isinstance(name, str) or not SERVER_NAME_RE.fullmatch(name):
        raise ValueError(f"invalid MCP server name {name!r}: use 1-40 characters from A-Z, a-z, "
                         "0-9, '-' and '_' (it becomes part of tool names)")
    return name


class McpServerSpec(BaseModel):
    """How to reach one server: a command to run (stdio) or a URL (streamable HTTP)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    type: Literal["stdio", "http", "streamable-http"] | None = None
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    url: str | None = None

    @field_validator("command", "url")
    @classmethod
    def _nonempty(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("must be a non-empty string")
        return value

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerSpec:
        if (self.command is None) == (self.url is None):
            raise ValueError("give either `command` (a stdio server) or `url` (streamable HTTP)")
        if self.url is not None and (self.args or self.env):
            raise ValueError("`args` and `env` are for stdio servers (`command`), not `url`")
        if self.type == "stdio" and self.command is None:
            raise ValueError("type stdio needs `command`")
        if self.type in ("http", "streamable-http") and self.url is None:
            raise ValueError(f"type {self.type} needs `url`")
        return self

    @property
    def transport(self) -> str:
        return "stdio" if self.command is not None else "http"

    def describe(self) -> str:
        if self.command is None:
            return str(self.url)
        return " ".join([self.command, *self.args])

    def expanded(self, environ: Mapping[str, str]) -> tuple[McpServerSpec, list[str]]:
        """A copy with `${VAR}` expanded; and the variables that were unset without a default."""
        missing: list[str] = []
        copy = self.model_copy(update={
            "command": expand(self.command, environ, missing) if self.command is not None else None,
            "args": [expand(a, environ, missing) for a in self.args],
            "env": entry_env(self.env, environ, missing),
            "url": expand(self.url, environ, missing) if self.url is not None else None,
        })
        return copy, list(dict.fromkeys(missing))


class McpServer(Record, kw_only=True):
    """A named server and where it was configured (a record holding the checked spec)."""

    name: str
    spec: McpServerSpec
    source: str


class McpConfig(Record, kw_only=True):
    servers: dict[str, McpServer] = {}
    problems: list[ConfigProblem] = []
    files: list[str] = []  # the files read, lowest priority first


def parse_servers(value: Any, where: str, field: str, source: str
                  ) -> tuple[dict[str, McpServer], list[ConfigProblem]]:
    """`{name: spec, ...}` -> servers, with one problem per bad entry (the rest still load)."""
    if not isinstance(value, dict):
        return {}, [ConfigProblem(path=where, field=field,
                                  message="must be an object of {name: {command, args, env} | {url}}")]
    servers: dict[str, McpServer] = {}
    problems: list[ConfigProblem] = []
    for name, raw in value.items():
        try:
            validate_server_name(name)
        except ValueError as exc:
            problems.append(ConfigProblem(path=where, field=f"{field}.{name}", message=str(exc)))
            continue
        if not isinstance(raw, dict):
            problems.append(ConfigProblem(path=where, field=f"{field}.{name}",
                                          message="must be an object: {command, args, env} or {url}"))
            continue
        try:
            spec = McpServerSpec(**raw)
        except ValidationError as exc:
            problems.extend(problems_of(exc, where, f"{field}.{name}"))
            continue
        servers[name] = McpServer(name=name, spec=spec, source=source)
    return servers, problems


def load_mcp_config(cwd: str | Path | None = None, origin: Path | None = None, *,
                    project: ProjectConfig | None = None) -> McpConfig:
    """The user's servers, then the project's (same name: the project wins). `project`: the
    trusted project configuration to use (default: `cwd`'s, if it is trusted now); `origin`:
    where to look when `cwd` has no .mcp.json (a worktree's checkout, for a file not committed)."""
    if project is None:
        project = decide(cwd if cwd is not None else os.getcwd(), origin).project
    config = McpConfig()
    user = paths.user_mcp_config()
    sources = [(str(user), read_json_object(user))]
    mcp_file = project.first("mcp")
    if mcp_file is not None:
        sources.append((str(mcp_file.path), read_config_file(mcp_file)))
    for path, (data, problem) in sources:
        if problem is not None:
            config.problems.append(problem)
        if data is None:
            continue
        config.files.append(path)
        if "mcpServers" not in data:
            continue
        servers, problems = parse_servers(data["mcpServers"], path, "mcpServers", path)
        config.servers.update(servers)
        config.problems.extend(problems)
    return config


def resolve_servers(names: Iterable[str], inline: Iterable[str | dict[str, McpServerSpec]],
                    config: McpConfig, inline_source: str = "agent definition"
                    ) -> tuple[dict[str, McpServer], list[str]]:
    """An agent's servers: configured ones by name and inline specs; unknown names are reported.

    `inline` is a definition's `mcp_servers` (names or {name: spec}); `names` come from spawn."""
    chosen: dict[str, McpServer] = {}
    unknown: list[str] = []
    for entry in [*inline, *names]:
        if isinstance(entry, str):
            found = config.servers.get(entry)
            if found is None:
                unknown.append(entry)
            else:
                chosen[entry] = found
        else:
            for name, spec in entry.items():
                chosen[name] = McpServer(name=name, spec=spec, source=inline_source)
    problems = [f"unknown MCP server {name!r} (configured: {', '.join(config.servers) or 'none'};"
                " see `swarm mcp list`)" for name in dict.fromkeys(unknown)]
    return chosen, problems


def definition_servers(value: Any) -> list[str | dict[str, McpServerSpec]]:
    """A definition's `mcp_servers`: a list of names and {name: spec} objects, or one object of
    {name: spec}. Raises ValueError with the entry at fault."""
    if value is None:
        return []
    items = [{k: v} for k, v in value.items()] if isinstance(value, dict) else value
    if isinstance(items, str):
        items = [part.strip() for part in items.split(",") if part.strip()]
    if not isinstance(items, list):
        raise ValueError("must be a list of server names or {name: {command, args, env} | {url}}")
    out: list[str | dict[str, McpServerSpec]] = []
    for item in items:
        if isinstance(item, str):
            out.append(validate_server_name(item))
        elif isinstance(item, dict):
            for name, raw in item.items():
                validate_server_name(name)
                if isinstance(raw, McpServerSpec):
                    out.append({name: raw})
                    continue
                if not isinstance(raw, dict):
                    raise ValueError(f"server {name!r}: must be {{command, args, env}} or {{url}}")
                try:
                    out.append({name: McpServerSpec(**raw)})
                except ValidationError as exc:
                    first = exc.errors()[0]
                    loc = ".".join(str(p) for p in first["loc"])
                    msg = str(first["msg"]).removeprefix("Value error, ")
                    raise ValueError(f"server {name!r}: {loc + ': ' if loc else ''}{msg}") from None
        else:
            raise ValueError(f"entries must be server names or {{name: spec}}, got {item!r}")
    return out
