"""Agent definitions: markdown files with YAML front matter whose body is the system prompt.

Sources, lowest to highest priority (Claude Code's, and its order): built-in (plain data in
`builtin.py`), plugin (`$SWARM_HOME/plugins/PLUGIN/agents/`, beside the plugin's
`.claude-plugin/plugin.json`; its agents' `hooks`, `mcpServers` and `permissionMode` are
ignored, as Claude Code ignores them), user (`~/.claude/agents/`, then `$SWARM_HOME/agents/`),
project (the nearest `.claude/agents/`, then `.swarm/agents/`, from the cwd up to the git root,
in a trusted project only: core/trust/workspace.py), policy (`<policy dir>/agents/`, an
organisation's managed definitions: the team's recorded `policy_dir`, never an agent's own
environment). Claude Code's files load as they are: a key swarm does not know (or
knows and ignores) is one warning naming the file and key, and the rest of the definition
applies; so is a tool swarm does not have. A bad value is reported with its file and field and
the file is skipped; it never breaks the others. The YAML parser is imported only when a user or
project file needs it.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from swarm.core.agents.agent_definition import (
    AgentDefinition,
    DefinitionProblem,
    Definitions,
    Shadowed,
    Source,
)
from swarm.core.agents.builtin import BUILTIN_AGENTS
from swarm.core.records import base as records
from swarm.core.records.names import TEAM_TOOLS
from swarm.core.store import paths
from swarm.core.trust.front_matter import field_name, front_matter
from swarm.core.trust.workspace import ProjectConfig, decide
from swarm.errors import NotFoundError

# Front-matter keys a user may write; camelCase / dashed spellings are accepted as aliases.
FIELDS = ("name", "description", "tools", "disallowed_tools", "model", "max_turns",
          "max_budget_usd", "max_tokens", "permission_mode", "color", "isolation",
          "omit_project_memory", "omit_git_status", "mcp_servers", "background", "hooks", "agent", "skills",
          "memory", "effort")
# The seeds' keys that mean nothing here: accepted, with a note that they do nothing.
NOTED_FIELDS = ("critical_system_reminder_experimental",)
# A plugin's agent runs with its prompt, tools and model; these it may not bring (Claude Code).
PLUGIN_IGNORED = ("hooks", "mcp_servers", "permission_mode")
PLUGIN_MANIFEST = (".claude-plugin", "plugin.json")


def parse_definition(text: str, path: str, source: Source, stem: str
                     ) -> AgentDefinition | list[DefinitionProblem]:
    """Parse one file's text; return the definition or the problems that made it unusable."""
    split = front_matter(text, path)
    if isinstance(split, DefinitionProblem):
        return [split]
    meta, body = split
    fields: dict[str, Any] = {}
    warnings: list[str] = []
    for key, value in meta.items():
        field = field_name(str(key))
        if field in NOTED_FIELDS:
            warnings.append(f"{path}: field {str(key)!r}: accepted, but does nothing in swarm")
        elif source == "plugin" and field in PLUGIN_IGNORED:
            warnings.append(f"{path}: field {str(key)!r}: ignored for a plugin's agent (as"
                            " Claude Code does)")
        elif field not in FIELDS:
            warnings.append(f"{path}: field {str(key)!r}: unknown field, ignored (known fields:"
                            f" {', '.join(FIELDS)})")
        else:
            fields[field] = value
    from swarm.core.agents.fields import checked, known_tools  # pydantic, for a file only

    if "tools" in fields:
        fields["tools"] = known_tools(fields["tools"], path, warnings)
    fields.setdefault("name", stem)

    return checked(fields, body.strip(), source, path, warnings)


FileSource = tuple[str, str, Callable[[], str]]  # its path, its stem, how to read it


def _dir_files(directory: Path, problems: list[DefinitionProblem]) -> list[FileSource]:
    try:
        files = sorted(p for p in directory.glob("*.md") if not p.name.startswith("."))
    except OSError as exc:
        problems.append(DefinitionProblem(path=str(directory), message=f"cannot list: {exc}"))
        return []
    return [(str(p), p.stem, partial(p.read_text, encoding="utf-8")) for p in files if p.is_file()]


def _plugin_files(problems: list[DefinitionProblem]) -> list[FileSource]:
    """Every plugin's `agents/*.md` (plugins by name); a folder with agents but no manifest
    is no plugin: one problem, its agents skipped."""
    try:
        plugins = sorted(p for p in paths.plugins_dir().iterdir()
                         if p.is_dir() and not p.name.startswith("."))
    except OSError:  # no plugins
        return []
    files: list[FileSource] = []
    for plugin in plugins:
        if not (plugin / "agents").is_dir():
            continue
        if not plugin.joinpath(*PLUGIN_MANIFEST).is_file():
            problems.append(DefinitionProblem(path=str(plugin), message=(
                "not a plugin (no .claude-plugin/plugin.json beside agents/); its agents are"
                " skipped")))
            continue
        files += _dir_files(plugin / "agents", problems)
    return files


def _load_files(files: Iterable[FileSource], source: Source,
                problems: list[DefinitionProblem]) -> list[AgentDefinition]:
    loaded: dict[str, AgentDefinition] = {}
    for path, stem, read in files:
        try:
            text = read()
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(DefinitionProblem(path=path, message=f"cannot read: {exc}"))
            continue
        result = parse_definition(text, path, source, stem)
        if isinstance(result, list):
            problems.extend(result)
        elif result.name in loaded:  # two files in one directory claim the same name
            problems.append(DefinitionProblem(
                path=path, field="name",
                message=f"{result.name!r} is already defined by {loaded[result.name].path}"))
        else:
            loaded[result.name] = result
    return list(loaded.values())


def _load_builtins() -> list[AgentDefinition]:
    """The built-ins: plain data, valid by construction (a test checks them as a file's fields
    are checked)."""
    return [AgentDefinition(**copy.deepcopy(fields), source="builtin", path=f"<builtin>/{name}")
            for name, fields in BUILTIN_AGENTS.items()]


def load_definitions(cwd: str | Path | None = None, *, project: ProjectConfig | None = None,
                     policy_dir: str | None = None) -> Definitions:
    """Merge built-in < plugin < user < project < policy definitions; problems are collected,
    not raised. `project`: the trusted project configuration (default: `cwd`'s, if it is
    trusted now); `policy_dir`: the team's managed definitions' directory (None: none)."""
    merged, problems = _merge(cwd, project, policy_dir)
    return Definitions(definitions=merged, problems=problems)


def _merge(cwd: str | Path | None, project: ProjectConfig | None, policy_dir: str | None
           ) -> tuple[dict[str, AgentDefinition], list[DefinitionProblem]]:
    problems: list[DefinitionProblem] = []
    merged: dict[str, AgentDefinition] = {}
    layers: list[list[AgentDefinition]] = [_load_builtins()]
    layers.append(_load_files(_plugin_files(problems), "plugin", problems))
    for directory in (paths.claude_user_agents_dir(), paths.user_agents_dir()):
        if directory.is_dir():
            layers.append(_load_files(_dir_files(directory, problems), "user", problems))
    if project is None:
        project = decide(cwd if cwd is not None else os.getcwd()).project
    for place in ("claude_agents", "agents"):  # lowest first (core.kinds places' keys)
        files = project.of(place)  # the bytes the trust digest was made of
        if files:
            layers.append(_load_files(((str(f.path), f.path.stem, f.text) for f in files),
                                      "project", problems))
    managed = Path(policy_dir) / "agents" if policy_dir else None
    if managed is not None and managed.is_dir():
        layers.append(_load_files(_dir_files(managed, problems), "policy", problems))
    for layer in layers:
        for definition in layer:
            previous = merged.get(definition.name)
            if previous is not None:
                shadowed = [Shadowed(source=previous.source, path=previous.path), *previous.overrides]
                definition = records.replace(definition, overrides=shadowed)
            merged[definition.name] = definition
    return dict(sorted(merged.items())), problems


def get_definition(agent_type: str, cwd: str | Path | None = None, *,
                   project: ProjectConfig | None = None,
                   policy_dir: str | None = None) -> AgentDefinition:
    """The definition for `agent_type`, or NotFoundError naming the available types."""
    definitions, problems = _merge(cwd, project, policy_dir)  # no Definitions model here
    wanted = agent_type.lower()
    found = definitions.get(wanted)
    if found is not None:
        return found
    message = f"unknown agent type {agent_type!r} (available: {', '.join(sorted(definitions))})"
    # A file named like the wanted type that failed to load is the likely explanation.
    broken = [p for p in problems if Path(p.path).stem.lower() == wanted]
    if broken:
        message += f"; {broken[0]} (fix the file to use it)"
    raise NotFoundError(message)


def effective_tools(definition: AgentDefinition, all_tools: Sequence[str],
                    team_tools: Sequence[str] = TEAM_TOOLS) -> list[str]:
    """The tools a teammate gets: all tools, narrowed to `tools` if given, minus
    `disallowed_tools`; the team tools are always kept. Order follows `all_tools`."""
    allowed = set(definition.tools) if definition.tools is not None else None
    denied = set(definition.disallowed_tools)
    keep_always = set(team_tools)
    result = [
        tool for tool in dict.fromkeys(all_tools)
        if tool in keep_always or ((allowed is None or tool in allowed) and tool not in denied)
    ]
    return result + [tool for tool in team_tools if tool not in result]


def listed(tool_name: str, names: Sequence[str] | set[str]) -> bool:
    """`mcp__server__tool` is listed by its own name or by its server's (`mcp__server`)."""
    return tool_name in names or (tool_name.startswith("mcp__")
                                  and "__".join(tool_name.split("__")[:2]) in names)


def lends(definition: AgentDefinition, tools: Mapping[str, object], tool_name: str) -> bool:
    """May a subagent of an agent with this definition and these tools have `tool_name`? One
    it has; or an MCP tool (of the subagent type's own servers) its definition does not
    disallow: an allow-list narrows built-in tools only (docs/design/hooks-mcp.md)."""
    if tool_name in tools:
        return True
    return tool_name.startswith("mcp__") and not listed(tool_name, definition.disallowed_tools)
