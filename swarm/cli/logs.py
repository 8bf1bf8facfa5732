"""`swarm logs` (what a teammate's pane showed) and `swarm transcript` (everything its model saw
and said, drawn by the same renderer, uncut)."""

from __future__ import annotations

import codecs
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import click

from swarm.cli.common import emit, json_option, open_team, team_option
from swarm.cli.completion import complete_member
from swarm.cli.helptext import examples
from swarm.core.store import paths
from swarm.core.store.file.watch import FileWatcher
from swarm.core.team.transcript import Transcript
from swarm.core.text.terminal import visible
from swarm.core.text.view import View
from swarm.errors import NotFoundError, OperationFailedError


@click.command(epilog=examples("swarm logs worker", "swarm logs worker --follow --team alpha"))
@click.argument("name", shell_complete=complete_member)
@team_option
@click.option("--follow", "-f", is_flag=True, help="Keep printing as the log grows.")
def logs(name: str, team_name: str | None, follow: bool) -> None:
    """Print a teammate's output log."""
    team = open_team(team_name)
    member = team.member(name)
    if member.host:  # its log stays on its host
        _remote_log(member.host, team.name, member.name, follow)
        return
    path = paths.agent_log(team.name, member.name)
    position = 0
    printer = _Printer()
    with FileWatcher([(path.parent, path.name)]) as watcher:
        while True:
            try:
                with open(path, "rb") as handle:
                    handle.seek(position)
                    chunk = handle.read()
                    position += len(chunk)
            except FileNotFoundError:
                chunk = b""
            printer.feed(chunk)
            if not follow:
                printer.end()
                return
            watcher.wait(1.0)


class _Printer:
    """Prints a log as it comes, in chunks: characters and colour codes split across two
    reads are held until whole."""

    def __init__(self) -> None:
        self.decode = codecs.getincrementaldecoder("utf-8")(errors="replace").decode
        self.held = ""  # the end of a read that may go on in the next (_PARTIAL_STYLE)

    def feed(self, chunk: bytes) -> None:
        if not chunk:  # click drops the pane's colours when stdout is not a terminal
            return
        text = self.held + self.decode(chunk)
        cut = _PARTIAL_STYLE.search(text)
        text, self.held = (text[:cut.start()], text[cut.start():]) if cut else (text, "")
        # The log holds the pane's colours and, from older runs or log lines, maybe raw team
        # data: keep the colours, escape every other control character.
        click.echo(visible(text, styles=True), nl=False)
        sys.stdout.flush()

    def end(self) -> None:
        if self.held:
            click.echo(visible(self.held), nl=False)


def _remote_log(host: str, team: str, name: str, follow: bool) -> None:
    """The member's agent.log on its host, read through ssh (`tail`, `-f` to follow)."""
    from swarm.backends.ssh import logs_argv

    proc = subprocess.Popen(logs_argv(host, team, name, follow), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    out = proc.stdout.fileno()
    printer = _Printer()
    try:
        for chunk in iter(lambda: os.read(out, 65536), b""):  # as it arrives (--follow)
            printer.feed(chunk)
        printer.end()
    except BaseException:  # Ctrl-C while following: ssh goes too
        proc.terminate()
        proc.wait()
        raise
    code = proc.wait()
    said = proc.stderr.read().decode(errors="replace").strip().splitlines()
    if code != 0:
        raise OperationFailedError(f"could not read {name}'s log on {host}: "
                                   f"{said[-1] if said else f'ssh exit {code}'}")


_PARTIAL_STYLE = re.compile(r"(\x1b(\[[0-9;]*)?|\r)\Z")  # a colour code or a CRLF, cut


def _render(entries: list[dict[str, Any]]) -> str:
    # The pane's renderer, uncut; click drops the colours when stdout is not a terminal.
    return "\n".join(View(color=True, cut=False).transcript(entries))


@click.command(epilog=examples(
    "swarm transcript worker", "swarm transcript worker --subagent worker.sub-1",
    "swarm transcript worker --json"))
@click.argument("name", shell_complete=complete_member)
@team_option
@click.option("--subagent", "subagent_id", default=None, metavar="ID",
              help="One of its subagents' transcripts instead (e.g. NAME.sub-1).")
@json_option
def transcript(name: str, team_name: str | None, subagent_id: str | None, as_json: bool) -> None:
    """Print everything a teammate's model saw and said."""
    team = open_team(team_name)
    member = team.member(name)
    path = paths.agent_transcript(team.name, member.name)
    if subagent_id is not None:
        path = _subagent_path(team.name, member.name, subagent_id)
    entries = Transcript(path).entries()
    emit(entries, as_json, _render, styled=True)


def _subagent_path(team: str, name: str, subagent_id: str) -> Path:
    known = sorted((p.stem for p in paths.subagents_dir(team, name).glob(f"{name}.sub-*.jsonl")),
                   key=lambda stem: int(stem.rsplit("-", 1)[1]) if stem.rsplit("-", 1)[1]
                   .isdigit() else 0)
    if subagent_id not in known:
        raise NotFoundError(f"{name} has no subagent {subagent_id!r} (its subagents: "
                            f"{', '.join(known) or 'none'})")
    return paths.subagent_transcript(team, name, subagent_id)
