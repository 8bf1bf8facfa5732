"""The CLI as a newcomer meets it: help pages with examples, `-V`, "did you mean", shell
completion of team, member and task names, and tables that fit the terminal."""

from __future__ import annotations

import contextlib
import io
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from swarm import __version__
from swarm.cli.main import COMMANDS, SUMMARIES, cli, main
from swarm.core.records.state import AgentState
from swarm.core.store import paths
from swarm.core.store.liveness import process_start_time
from swarm.core.team.state import write_state
from swarm.core.team.team import Team
from swarm.core.text.tables import render

SWARM_EXE = Path(sys.executable).parent / "swarm"
CRASH = ("crashed: Traceback (most recent call last):\n  File \"/src/app/agent.py\", line 412, in "
         "run\n    raise RuntimeError('the model returned something nobody expected at all')\n"
         "RuntimeError: the model returned something nobody expected at all")


def exe(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SWARM_EXE), *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **(env or {})})


def run(*args: str) -> tuple[int, str, str]:
    """`main` in-process, with its real error handling: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return code, out.getvalue(), err.getvalue()


# -- every help page ---------------------------------------------------------------------------
def every_command() -> Iterator[tuple[list[str], click.Command]]:
    """(path, command) for every command and group in the tree, the lazy ones loaded."""
    def walk(command: click.Command, path: list[str], ctx: click.Context) -> Iterator[Any]:
        yield path, command
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                assert sub is not None, name
                yield from walk(sub, [*path, name], click.Context(sub, info_name=name, parent=ctx))

    yield from walk(cli, ["swarm"], click.Context(cli, info_name="swarm"))


COMMANDS_BY_PATH = {" ".join(path): command for path, command in every_command()}
COMMAND_PATHS = list(COMMANDS_BY_PATH)


def help_page(path: list[str]) -> str:
    result = CliRunner().invoke(cli, [*path[1:], "--help"], prog_name="swarm")
    assert result.exit_code == 0, result.output
    return result.output


def example_commands(page: str) -> list[list[str]]:
    """The `swarm ...` command line in each line under `Examples:`, as words (shell pipes,
    redirections, `$(...)` and `# comments` around it left out)."""
    found = []
    for line in page.split("Examples:", 1)[1].splitlines() if "Examples:" in page else []:
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split, lexer.commenters = True, "#"
        words = list(lexer)
        if "swarm" in words:
            words = words[words.index("swarm"):]
            ends = [i for i, w in enumerate(words) if w and set(w) <= set("();<>|&")]
            found.append(words[: ends[0] if ends else len(words)])
    return found


@pytest.mark.parametrize("name", COMMAND_PATHS)
def test_every_help_page_shows_an_example_of_its_command(name: str) -> None:
    path = name.split()
    own = [words for words in example_commands(help_page(path)) if words[: len(path)] == path]
    assert own, f"`{name} --help` has no `Examples:` line running {name}"


@pytest.mark.parametrize("name", COMMAND_PATHS)
def test_every_example_parses_as_the_command_line_it_shows(name: str, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """An example with a typo in an option name would teach the wrong thing."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "review.md").write_text("review src/ for unchecked errors")  # a --prompt-file
    for words in example_commands(help_page(name.split())):
        if "COMMAND" in words:  # `swarm COMMAND --help`: a placeholder
            continue
        depth = max(n for n in range(1, len(words) + 1) if " ".join(words[:n]) in COMMANDS_BY_PATH)
        command = COMMANDS_BY_PATH[" ".join(words[:depth])]
        command.make_context(words[depth - 1], words[depth:])  # a bad option or value raises


@pytest.mark.parametrize("name", COMMAND_PATHS)
def test_every_option_says_what_it_does(name: str) -> None:
    command = COMMANDS_BY_PATH[name]
    silent = [p.opts[0] for p in command.params
              if isinstance(p, click.Option) and not (p.help or "").strip()]
    assert not silent, f"`{name}` options without help: {silent}"


def test_the_options_the_issue_found_silent_now_explain_themselves() -> None:
    assert "The new status" in help_page(["swarm", "tasks", "update"])
    demo = help_page(["swarm", "demo"])
    assert "Where the workers run" in demo and "Seconds the demo may take" in demo


def test_the_command_list_is_the_commands_own_short_help() -> None:
    """`swarm --help` lists SUMMARIES (it imports no command module): each one must say what
    the command's own docstring says, and no command may be missing."""
    ctx = click.Context(cli, info_name="swarm")
    for name in COMMANDS:
        command = cli.get_command(ctx, name)
        assert command is not None, name
        assert SUMMARIES.get(name) == command.get_short_help_str(limit=1000), name
    assert set(SUMMARIES) == set(COMMANDS)
    page = help_page(["swarm"])
    assert "status       Show what each teammate is doing." in page
    assert "Examples:" in page


# -- -V and did you mean -----------------------------------------------------------------------
def test_dash_capital_v_is_the_version() -> None:
    for flag in ("-V", "--version"):
        code, out, _ = run(flag)
        assert code == 0 and out.strip() == f"swarm, version {__version__}"


def test_a_mistyped_command_gets_a_suggestion() -> None:
    code, _, err = run("statsu")
    assert code == 2
    assert err.strip() == ("swarm: error: No such command 'statsu'. Did you mean 'status'? "
                           "(see `swarm --help`)")
    code, _, err = run("tasks", "lsit")
    assert code == 2 and "Did you mean 'list'?" in err
    code, _, err = run("xyzzy")
    assert code == 2 and "Did you mean" not in err and "No such command 'xyzzy'" in err


# -- completion --------------------------------------------------------------------------------
def complete(words: str, env: dict[str, str] | None = None) -> list[str]:
    """What Tab offers after `words` (a trailing space: a new word), from the real executable
    through the variables Click's bash script sets."""
    split = words.split()
    cword = len(split) if words.endswith(" ") else len(split) - 1
    proc = exe(env={"COMP_WORDS": words, "COMP_CWORD": str(cword),
                    "_SWARM_COMPLETE": "bash_complete", **(env or {})})
    assert proc.returncode == 0 and proc.stderr == "", proc
    return [line.partition(",")[2] for line in proc.stdout.splitlines() if line]


@pytest.fixture
def busy(team: Team) -> Team:
    team.tasks.add("write the parser")
    team.tasks.add("test the parser")
    Team.create("beta", description="another one")
    return team


def test_completion_callbacks_swallow_errors(busy: Team, monkeypatch: pytest.MonkeyPatch) -> None:
    from swarm.cli import completion

    def broken(*_: Any) -> Path:
        raise RuntimeError("disk on fire")

    ctx = click.Context(cli, info_name="swarm")
    with monkeypatch.context() as patch:
        patch.setattr(paths, "teams_dir", broken)
        assert completion.complete_team(ctx, cli.params[0], "") == []
    assert [i.value for i in completion.complete_team(ctx, cli.params[0], "")] == ["alpha", "beta"]


def test_completion_of_an_unknown_shell_is_a_usage_error() -> None:
    code, _, err = run("completion", "tcsh")
    assert code == 2 and "'tcsh' is not one of 'bash', 'zsh', 'fish'" in err


# -- tables that fit ---------------------------------------------------------------------------
@pytest.fixture
def crashed(team: Team) -> Team:
    """alice died with a long, multi-line crash reason; bob is idle in a long mode name."""
    write_state("alpha", "alice", AgentState(state="dead", detail=CRASH, turns=3))
    write_state("alpha", "bob", AgentState(state="idle", mode="bypassPermissions"))
    team.tasks.add("a subject long enough to need cutting when the terminal is as narrow as a "
                   "tmux pane beside the lead", owner="alice")
    Team.create("a-team-with-a-long-name", description="what it is for, at length: " * 5)
    return team


def lines_of(*args: str, columns: int | None, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", str(columns))
    code, out, err = run(*args)
    assert code == 0, err
    return out.splitlines()


TABLE_COMMANDS = [("status", "--team", "alpha"), ("tasks", "list", "--team", "alpha"),
                  ("team", "list"), ("team", "show", "alpha"), ("report", "--team", "alpha"),
                  ("team", "show", "a-team-with-a-long-name")]


@pytest.mark.parametrize("args", TABLE_COMMANDS, ids=lambda a: " ".join(a[:3]))
def test_tables_fit_a_59_column_pane(crashed: Team, args: tuple[str, ...],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    lines = lines_of(*args, columns=59, monkeypatch=monkeypatch)
    too_long = [line for line in lines if len(line) > 59]
    assert not too_long, "\n".join(too_long)


def test_wait_prints_the_same_fitted_table(team: Team, monkeypatch: pytest.MonkeyPatch) -> None:
    me = os.getpid()
    for name in ("alice", "bob"):
        write_state("alpha", name, AgentState(state="idle", pid=me, mode="bypassPermissions",
                                              started_at=process_start_time(me)))
    lines = lines_of("wait", "--team", "alpha", "--until", "idle", columns=59,
                     monkeypatch=monkeypatch)
    assert lines[0].startswith("NAME") and all(len(line) <= 59 for line in lines)
    assert any(line.startswith("bob") and "bypassPermissions" in line for line in lines)
    wide = lines_of("wait", "--team", "alpha", "--until", "idle", "--wide", columns=59,
                    monkeypatch=monkeypatch)
    assert "BACKEND" in wide[0] and "ACTIVE" in wide[0]


def test_status_at_59_columns_cuts_the_crash_reason_and_says_how_to_see_it(
        crashed: Team, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = lines_of("status", "--team", "alpha", columns=59, monkeypatch=monkeypatch)
    alice = next(line for line in lines if line.startswith("alice"))
    assert "dead (crashed" in alice and "…" in alice
    assert lines[0].split()[:2] == ["NAME", "STATE"]
    assert "--wide" in lines[-2] or any("--wide shows all" in line for line in lines)


def test_wide_shows_every_column_and_the_whole_reason(crashed: Team,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    lines = lines_of("status", "--team", "alpha", "--wide", columns=59, monkeypatch=monkeypatch)
    flat = " ".join(CRASH.split())
    assert any(flat in line for line in lines)
    assert lines[0].split() == ["NAME", "STATE", "MODE", "BACKEND", "PANE", "PID", "TASK",
                                "UNREAD", "TURNS", "TOKENS", "COST", "ACTIVE"]
    assert not any("…" in line or "--wide" in line for line in lines)
    tasks = lines_of("tasks", "list", "--team", "alpha", "--wide", columns=59,
                     monkeypatch=monkeypatch)
    assert any("beside the lead" in line for line in tasks)


def test_a_pipe_gets_whole_cells(crashed: Team, monkeypatch: pytest.MonkeyPatch) -> None:
    """No terminal on stdout and no $COLUMNS: nothing to fit, nothing cut (scripts, grep)."""
    lines = lines_of("status", "--team", "alpha", columns=None, monkeypatch=monkeypatch)
    assert any(" ".join(CRASH.split()) in line for line in lines)


def test_at_80_columns_the_reason_gives_way_before_the_mode(crashed: Team,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    lines = lines_of("status", "--team", "alpha", columns=80, monkeypatch=monkeypatch)
    assert all(len(line) <= 80 for line in lines)
    bob = next(line for line in lines if line.startswith("bob"))
    assert "bypassPermissions" in bob.split()


def test_the_renderer_never_exceeds_the_width() -> None:
    rows = [["x" * 40, "y" * 3, "z" * 70], ["a", "b", "c"]]
    for width in (1, 5, 12, 30, 59, 80, 200):
        table = render(rows, ["ONE", "TWO", "THREE"], width, stretch=("THREE",))
        assert all(len(line) <= width for line in table.text.splitlines()), width
    whole = render(rows, ["ONE", "TWO", "THREE"])
    assert not whole.cut and "z" * 70 in whole.text and "…" not in whole.text
    cut = render(rows, ["ONE", "TWO", "THREE"], 80, stretch=("THREE",))
    assert cut.cut and "x" * 40 in cut.text and "z" * 32 + "…" in cut.text  # THREE gave way
    dropped = render(rows, ["ONE", "TWO", "THREE"], 59, optional=("TWO",), stretch=("THREE",))
    assert dropped.text.splitlines()[0].split() == ["ONE", "THREE"]
