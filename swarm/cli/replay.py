"""`swarm replay DIR`, and `--record DIR` of `swarm lead`, `swarm spawn` and `swarm demo`."""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from swarm.cli.common import SECONDS, emit, json_option
from swarm.cli.helptext import examples
from swarm.core.text.terminal import visible

F = TypeVar("F", bound=Callable[..., Any])


def record_option(func: F) -> F:
    return click.option(
        "--record", "record", type=click.Path(file_okay=False, path_type=Path), default=None,
        metavar="DIR", help="Keep every model request and reply per member in DIR (credentials"
        " redacted); `swarm replay DIR` runs it again offline.")(func)


def start_recording(directory: Path | None, replace: dict[str, Any] | None = None) -> None:
    """`--record DIR`: the command as run (from its parsed parameters, so it is the same
    in-process or not) into DIR/run.json, and this process and its members recording."""
    if directory is None:
        return
    from swarm.ops.replay import begin_recording

    ctx = click.get_current_context()
    assert ctx.command.name is not None
    params = {**ctx.params, **(replace or {})}
    options: list[str] = [ctx.command.name]
    positional: list[str] = []
    for param in ctx.command.params:
        value = params.get(param.name or "")
        if param.name == "record" or value is None or value is False or value == ():
            continue
        if isinstance(value, io.IOBase):  # a --prompt-file: the caller passes its text instead
            continue
        if isinstance(param, click.Argument):
            positional.append(str(value))
            continue
        flag = param.opts[-1] if param.opts[-1].startswith("--") else param.opts[0]
        if isinstance(param, click.Option) and param.is_flag:
            if value != param.default:
                options.append(flag)
            continue
        if value == param.default:
            continue
        for one in value if isinstance(value, tuple) else (value,):
            options += [flag, str(one)]
    begin_recording(directory, [*options, "--", *positional], Path.cwd())


def one_line(text: str | None, width: int = 110) -> str:
    flat = (text or "").replace("\n", "⏎")
    return flat if len(flat) <= width else flat[:width - 1] + "…"


@click.command(epilog=examples(
    "swarm lead --headless --record rec/ 'split the tests'",
    "swarm replay rec/",
    "swarm replay rec/ --json --team check",
    "swarm replay rec/ --prompt 'split the tests by speed'"))
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("--team", "-t", "team_name", default=None,
              help="The team the replay runs in (default: RECORDED-replayN).")
@click.option("--prompt", default=None, help="A recorded lead's prompt, changed.")
@click.option("--timeout", type=SECONDS, default=300.0, show_default=True,
              help="Seconds the replay may take.")
@json_option
def replay(directory: Path, team_name: str | None, prompt: str | None, timeout: float,
           as_json: bool) -> None:
    """Run a recorded team job again offline and report where it diverged.

    Each member (the lead, every teammate) gets its recorded replies in order instead of a
    model; each request is compared with the recorded one first. Exit 0: every request
    matched; 1: a member diverged (the first difference per member is shown).
    """
    from swarm.ops.replay import run_replay

    report = run_replay(directory, team_name, prompt, timeout)

    def human(_: object) -> str:
        lines = [f"replayed {report.directory}: swarm {report.command}"
                 + (f" in team {report.team}" if report.team else "")
                 + f", exit {report.exit_code}, {report.seconds:.1f}s"]
        for m in report.members:
            if m.request is None:
                lines.append(f"  {m.member}: {m.matched} of {m.recorded} requests matched")
                continue
            said = "timing at" if m.timing else "diverged at"
            lines += [f"  {m.member}: {said} request {m.request}: {m.what}",
                      f"    recorded: {one_line(m.recorded_text)}",
                      f"    now:      {one_line(m.now)}"]
        timing = f" ({len(report.timing)} timing difference(s), not counted)" if report.timing else ""
        lines.append(("diverged" if report.diverged else "no divergence") + timing)
        return visible("\n".join(lines))

    emit(report.as_dict(), as_json, human)
    if report.diverged:
        sys.exit(1)  # the report said where: no error line on top
