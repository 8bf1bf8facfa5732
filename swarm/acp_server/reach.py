"""What reaches past the lead: the editor's MCP servers (from `session/new` or `session/load`)
become the lead's tools, and teammates' file edits (Write, Edit in their transcripts) show in the
editor as tool calls with their diffs and locations."""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Any

import acp
from acp.schema import McpServerStdio

from swarm.core.records.names import LEAD_NAME
from swarm.core.store import paths
from swarm.core.trust.mcp_config import McpServer, McpServerSpec
from swarm.errors import SwarmError
from swarm.lead.process import Lead
from swarm.runtime.extensions.mcp_client import McpManager

from .link import EditorLink
from .view import RESULT_LIMIT, edit_content

log = logging.getLogger(__name__)
EDITOR_SOURCE = "the editor (session/new)"
EDITS = ("Write", "Edit")


def editor_servers(given: list[Any], warn: Any) -> dict[str, McpServer]:
    """The editor's stdio servers as swarm's records; others are said and left out (swarm's
    MCP client has no headers for an HTTP server, and no SSE)."""
    servers: dict[str, McpServer] = {}
    for server in given:
        if not isinstance(server, McpServerStdio):
            warn(f"MCP server {server.name!r} from the editor left out: swarm acp takes stdio"
                 " servers only")
            continue
        try:
            spec = McpServerSpec(command=server.command, args=list(server.args),
                                 env={e.name: e.value for e in server.env})
        except ValueError as exc:
            warn(f"MCP server {server.name!r} from the editor left out: {exc}")
            continue
        servers[server.name] = McpServer(name=server.name, spec=spec, source=EDITOR_SOURCE)
    return servers


def give_to_lead(lead: Lead, servers: dict[str, McpServer], abort: threading.Event) -> list[str]:
    """Start the servers (bounded by SWARM_MCP_TIMEOUT) as the lead's own; their tools' names.
    They run whatever the project's trust: the editor (the person) gave them. They stop with
    the session (the lead's `end_extensions`)."""
    if not servers:
        return []
    extensions = lead.extensions
    if extensions.mcp is not None:  # a load into a session that has them: keep the first
        return []
    extensions.mcp = McpManager(servers, cwd=lead.cwd, warn=lead.notice,
                                log_dir=paths.agent_dir(lead.team.name, LEAD_NAME))
    tools = extensions.start_mcp(abort)
    lead.loop.tools.update(tools)
    return list(tools)


class EditFollower:
    """Teammates' transcripts, read as they grow: each Write/Edit call a tool call for the
    editor (its diff, its file), and its result an update. Edits made before the session began
    are not shown; edits made between turns are shown at the next turn."""

    def __init__(self, lead: Lead, link: EditorLink) -> None:
        self.lead = lead
        self.link = link
        self._offsets: dict[str, int] = {}
        self._open: set[str] = set()  # tool call ids started, not yet ended
        self._lock = threading.Lock()  # the watcher and the prompt's thread both look
        for name in self._members():
            self._offsets[name] = self._size(name)

    def _members(self) -> list[str]:
        try:
            return [m.name for m in self.lead.team.members() if m.name != LEAD_NAME]
        except SwarmError:
            return []

    def _size(self, name: str) -> int:
        try:
            return paths.agent_transcript(self.lead.team.name, name).stat().st_size
        except OSError:
            return 0

    def look(self) -> None:
        with self._lock:
            for name in self._members():
                for entry in self._new_entries(name):
                    message = entry.get("message") if entry.get("kind") == "message" else None
                    if isinstance(message, dict) and isinstance(message.get("content"), list):
                        self._blocks(name, message["content"])

    def _new_entries(self, name: str) -> list[dict[str, Any]]:
        path = paths.agent_transcript(self.lead.team.name, name)
        offset = self._offsets.get(name, 0)
        try:
            with path.open("rb") as handle:
                handle.seek(offset)
                data = handle.read()
        except OSError:
            return []
        whole = data[:data.rfind(b"\n") + 1]  # a line still being written waits
        self._offsets[name] = offset + len(whole)
        entries = []
        for line in whole.splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict):
                entries.append(entry)
        return entries

    def _blocks(self, name: str, blocks: list[Any]) -> None:
        for block in blocks:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use" and block.get("name") in EDITS:
                self._started(name, block)
            elif block.get("type") == "tool_result":
                call_id = f"{name}-{block.get('tool_use_id')}"
                if call_id in self._open:
                    self._open.discard(call_id)
                    self.link.send(acp.update_tool_call(
                        call_id, status="failed" if block.get("is_error") else "completed",
                        content=[acp.tool_content(acp.text_block(_text(block)[:RESULT_LIMIT]))]))

    def _started(self, name: str, block: dict[str, Any]) -> None:
        args = block.get("input")
        if not isinstance(args, dict):
            return
        try:
            cwd = Path(self.lead.team.member(name).cwd or self.lead.cwd)
        except SwarmError:
            cwd = self.lead.cwd
        content, locations = edit_content(str(block.get("name")), args, cwd)
        call_id = f"{name}-{block.get('id')}"
        self._open.add(call_id)
        self.link.send(acp.start_tool_call(
            call_id, f"{name}: {block.get('name')} {args.get('file_path', '')}".rstrip(),
            kind="edit", status="in_progress", content=content or None,
            locations=locations or None, raw_input=args))


def _text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""
