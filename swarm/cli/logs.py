"""`swarm logs` and `swarm transcript`."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from swarm.cli.common import emit, json_option, open_team, team_option
from swarm.core import paths
from swarm.core.transcript import Transcript
from swarm.core.watch import FileWatcher


@click.command()
@click.argument("name")
@team_option
@click.option("--follow", "-f", is_flag=True, help="Keep printing as the log grows.")
def logs(name: str, team_name: str | None, follow: bool) -> None:
    """Print a teammate's output log."""

    team = open_team(team_name)
    member = team.member(name)
    path = paths.agent_log(team.name, member.name)
    position = 0
    with FileWatcher([(path.parent, path.name)]) as watcher:
        while True:
            try:
                with open(path, "rb") as handle:
                    handle.seek(position)
                    chunk = handle.read()
                    position += len(chunk)
            except FileNotFoundError:
                chunk = b""
            if chunk:
                sys.stdout.write(chunk.decode(errors="replace"))
                sys.stdout.flush()
            if not follow:
                return
            watcher.wait(1.0)


def _render(entries: list[dict[str, Any]]) -> str:
    lines = []
    for entry in entries:
        kind = entry.get("kind")
        stamp = str(entry.get("ts", ""))[11:19]
        if kind == "message":
            message = entry["message"]
            for block in message.get("content", []):
                kind_of = block.get("type")
                if kind_of == "text":
                    lines.append(f"{stamp} {message['role']}: {block['text']}")
                elif kind_of == "tool_use":
                    lines.append(f"{stamp} {message['role']} -> {block['name']} "
                                 f"{json.dumps(block.get('input'))}")
                elif kind_of == "tool_result":
                    body = block.get("content")
                    flag = " (error)" if block.get("is_error") else ""
                    lines.append(f"{stamp} result{flag}: {body}")
        elif kind == "compaction":
            lines.append(f"{stamp} [compacted] {entry.get('summary', '')}")
        else:
            lines.append(f"{stamp} [{entry.get('event', kind)}]")
    return "\n".join(lines)


@click.command()
@click.argument("name")
@team_option
@json_option
def transcript(name: str, team_name: str | None, as_json: bool) -> None:
    """Print everything a teammate's model saw and said."""

    team = open_team(team_name)
    member = team.member(name)
    entries = Transcript(paths.agent_transcript(team.name, member.name)).entries()
    emit(entries, as_json, _render)
