#!/usr/bin/env python3
"""Teammate kinds benchmark: what each kind of teammate costs to start and to keep.

For each kind in KINDS (a shell teammate, an SDK teammate, and the agent CLIs as teammates), in a
temporary SWARM_HOME with the hidden backend, RUNS times:
- first answer: `swarm spawn` started -> a message sent to it as soon as spawn returns -> its
  answer (the message carrying the reply's token) in the lead's mailbox;
- next answer: one more message to the idle teammate -> its answer;
- idle memory: once it is idle again (and SETTLE seconds later), RSS and PSS (psutil
  `memory_full_info`) summed over the teammate's whole process tree: its `swarm agent` process,
  the CLI's process and the CLI's children (swarm's MCP server, node helpers).
Medians are printed (the first answer's best run too), one table. Models are fake servers on loopback (tests/support/fake_anthropic.py,
fake_responses.py, fake_gemini.py, fake_openai.py) answering at once, so the times are swarm's and the CLI's own;
each CLI gets a private HOME and the pinned build from tests/support/agent_clis.py (installed on first
use). A kind this swarm cannot spawn yet (an `--agent` not in the registry of teammate kinds, core.kinds, or a CLI
npm cannot install here) is printed as "not available: <reason>".

Run: .venv/bin/python scripts/bench_agent_clis.py [KIND...]   (about 2 minutes for all;
on a loaded machine the best run is the steadier figure)

Before and after in one run: `--swarm PATH` names another checkout (the code before a change,
e.g. `git worktree add --detach /tmp/before main`); each run of each kind is then made with
both, interleaved (before, after, before, ...), every `swarm` process of a run importing its
tree's package (PYTHONPATH). `--team-sizes 1,4` runs teams of that many teammates of the kind:
idle PSS per teammate is then its process tree's plus its share of the team's MCP server on the
host (`swarm mcp hub`, in no teammate's tree: its PSS divided by the teammates it serves);
"swarm's PSS" is the part of it that is swarm's own processes (the `swarm agent` driver, a
`swarm mcp serve` child, the hub's share), steadier than the whole, whose CLI pages other
processes on the machine may share.
`--runs N` (default 5). First answers are the first teammate's, in teams of one.
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
HOME = Path(tempfile.mkdtemp(prefix="swarm-bench-clis-"))
os.environ["SWARM_HOME"] = str(HOME / "swarm-home")
for var in ("SWARM_MODEL", "SWARM_BACKEND", "SWARM_DEBUG", "SWARM_TEAM", "SWARM_AGENT_ID",
            "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "TMUX"):
    os.environ.pop(var, None)
sys.path.insert(0, str(ROOT))

import psutil  # noqa: E402

from swarm.core.kinds import agent_names  # noqa: E402
from swarm.core.records.names import LEAD_NAME  # noqa: E402
from swarm.core.records.protocol import IdleNotification  # noqa: E402
from swarm.core.store.api import Mailbox  # noqa: E402
from swarm.core.store.liveness import is_alive  # noqa: E402
from swarm.core.team.state import read_state  # noqa: E402
from swarm.core.team.team import Team  # noqa: E402

SWARM = str(Path(sys.executable).with_name("swarm"))
RUNS = 5
SETTLE = 2.0  # seconds idle before memory is read (start-up garbage, lazy imports done)
ANSWER_TIMEOUT = 120.0
MB = 1024 * 1024
LOOPBACK = {"NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}


# -- the kinds ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Kind:
    """One kind of teammate: how it is spawned, and the fake model server and private HOME it
    runs against. `server` makes the server (None: no model); `prepare(server, home)` writes
    the CLI's settings there and returns the spawn's environment; `answer(server, token)`
    makes the next reply carry the token (and returns the message to send)."""

    name: str
    spawn: tuple[str, ...]
    agent: str | None = None  # `--agent NAME`: must be in core.kinds
    cli: str | None = None  # tests.support.agent_clis name of its executable
    server: Callable[[], Any] | None = None
    prepare: Callable[[Any, Path], dict[str, str]] = lambda server, home: {}
    answer: Callable[[Any, str], str] = lambda server, token: token


def _reply_with(server: Any, token: str) -> str:
    server.default_text = token  # every fake answers an unscripted request with this
    return f"Answer with the word {token}."


def _anthropic() -> Any:
    from tests.support.fake_anthropic import FakeAnthropic

    return FakeAnthropic()


def _responses() -> Any:
    from tests.support.fake_responses import FakeResponses

    return FakeResponses()


def _gemini() -> Any:
    from tests.support.fake_gemini import FakeGemini

    return FakeGemini()


def _openai() -> Any:
    from tests.support.fake_openai import FakeOpenAI

    return FakeOpenAI()


def _acp_env(server: Any, home: Path) -> dict[str, str]:
    """An ACP agent (Qwen Code, OpenCode) on the fake OpenAI-compatible server: swarm's model
    proxy stands for it and the agent's private settings name the model."""
    return {"OPENAI_API_KEY": "bench-key", "OPENAI_BASE_URL": server.api_url,
            "OPENAI_MODEL": "gpt-fake", "HOME": str(home), **LOOPBACK}


def _sdk_env(server: Any, home: Path) -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": "bench-key", "ANTHROPIC_BASE_URL": server.base_url,
            "HOME": str(home), **LOOPBACK}


def _claude_env(server: Any, home: Path) -> dict[str, str]:
    return {**_sdk_env(server, home), "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}


def _codex_env(server: Any, home: Path) -> dict[str, str]:
    (home / ".codex").mkdir(exist_ok=True)
    (home / ".codex" / "config.toml").write_text(
        'model = "gpt-fake"\nmodel_provider = "fake"\n\n[model_providers.fake]\n'
        f'name = "fake"\nbase_url = "{server.api_url}"\nwire_api = "responses"\n'
        'env_key = "OPENAI_API_KEY"\n')
    return {"OPENAI_API_KEY": "bench-key", "HOME": str(home), **LOOPBACK}


def _gemini_env(server: Any, home: Path) -> dict[str, str]:
    (home / ".gemini").mkdir(exist_ok=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps(
        {"security": {"auth": {"selectedType": "gemini-api-key"}}}))
    return {"GEMINI_API_KEY": "bench-key", "GOOGLE_GEMINI_BASE_URL": server.base_url,
            "GEMINI_CLI_TRUST_WORKSPACE": "true", "HOME": str(home), **LOOPBACK}


KINDS = (
    Kind("shell", ("--model", "shell", "--allow", "Bash(echo:*)"),
         answer=lambda server, token: f"$ echo {token}"),
    Kind("sdk (sonnet)", ("--model", "sonnet"), server=_anthropic, prepare=_sdk_env,
         answer=_reply_with),
    Kind("claude-code", ("--agent", "claude-code"), agent="claude-code", cli="claude",
         server=_anthropic, prepare=_claude_env, answer=_reply_with),
    Kind("codex", ("--agent", "codex"), agent="codex", cli="codex", server=_responses,
         prepare=_codex_env, answer=_reply_with),
    Kind("gemini", ("--agent", "gemini", "--model", "gemini-2.5-flash"), agent="gemini", cli="gemini", server=_gemini,
         prepare=_gemini_env, answer=_reply_with),
    Kind("acp:qwen-code", ("--agent", "acp:qwen-code"), agent="acp:qwen-code",
         cli="qwen-code", server=_openai, prepare=_acp_env, answer=_reply_with),
    Kind("acp:opencode", ("--agent", "acp:opencode"), agent="acp:opencode", cli="opencode",
         server=_openai, prepare=_acp_env, answer=_reply_with),
)


# -- one run ------------------------------------------------------------------------------------
@dataclass
class Run:
    first: float  # seconds: spawn started -> first answer in the lead's mailbox
    next: float  # seconds: a message to the idle teammate -> its answer
    rss: float  # MB over the teammate's process tree, idle (its share of the hub added)
    pss: float
    processes: int
    hub_pss: float = 0.0  # the team's MCP server on the host, whole
    # swarm's own processes of the tree (driver, a `mcp serve` child) plus the hub's share: what
    # swarm adds to the CLI, apart from the CLI's pages other processes on the machine share
    swarm_pss: float = 0.0


@dataclass
class Result:
    kind: Kind
    runs: list[Run] = field(default_factory=list)
    unavailable: str | None = None
    tree: str = "this checkout"  # which swarm ran it
    size: int = 1  # teammates in the team


class Unavailable(Exception):
    """This kind cannot run here (yet): the reason is printed in its row."""


def usable(kind: Kind) -> dict[str, str]:
    """PATH for the kind's CLI, or Unavailable with why."""
    if kind.agent is not None and kind.agent not in agent_names():
        raise Unavailable(f"--agent {kind.agent} is not supported by this swarm yet"
                          f" (it has {', '.join(agent_names())})")
    if kind.cli is None:
        return {}
    from tests.support.agent_clis import install, installed

    try:
        exe = installed(kind.cli) or install(kind.cli)
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        raise Unavailable(f"the {kind.cli} CLI cannot be installed here: {exc}") from exc
    return {"PATH": f"{exe.parent}{os.pathsep}{os.environ['PATH']}"}


def answered(lead: Mailbox, name: str, token: str, timeout: float) -> float:
    """Seconds until `name`'s reply carrying `token` is in the lead's mailbox: a message (the
    shell model's) or the idle notification's summary (a model's last text); a permission
    request that quotes it is no answer. Messages are marked read as they are looked at."""
    start = time.perf_counter()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        unread = lead.wait(timeout=1.0)
        found = any(m.sender == name and token in m.text
                    and isinstance(m.structured(), IdleNotification | None) for m in unread)
        at = time.perf_counter() - start
        lead.mark_read([m.id for m in unread])
        if found:
            return at
    raise Unavailable(f"no answer from {name} within {timeout:.0f} s")


def is_hub(proc: psutil.Process) -> bool:
    with contextlib.suppress(psutil.Error):
        argv = proc.cmdline()
        return "mcp" in argv and "hub" in argv
    return False


def is_swarms(proc: psutil.Process) -> bool:
    """One of swarm's own processes (the `swarm agent` driver, a `swarm mcp serve` child), not
    the CLI's."""
    with contextlib.suppress(psutil.Error):
        argv = proc.cmdline()
        return "swarm" in argv or any(a.endswith("/swarm") for a in argv[:2])
    return False


def tree_memory(pid: int) -> tuple[float, float, int, float]:
    """RSS and PSS in MB summed over the process and all its descendants, their count, and the
    PSS of swarm's own processes among them; the team's MCP server on the host left out (the
    first teammate started it: it is counted apart, shared)."""
    root = psutil.Process(pid)
    rss = pss = own = 0.0
    count = 0
    for proc in [root, *root.children(recursive=True)]:
        if is_hub(proc):
            continue
        with contextlib.suppress(psutil.NoSuchProcess, psutil.ZombieProcess):
            info = proc.memory_full_info()
            rss += info.rss / MB
            pss += getattr(info, "pss", info.rss) / MB
            own += getattr(info, "pss", info.rss) / MB if is_swarms(proc) else 0.0
            count += 1
    return rss, pss, count, own


def hub_memory(team: Team) -> tuple[float, float]:
    """RSS and PSS in MB of the team's MCP server on this host (0 when it has none)."""
    from swarm.runtime.clis.team_server import read_run

    with contextlib.suppress(ImportError, psutil.Error):  # a tree before the hub has none
        run = read_run(team.name)
        if run is not None:
            info = psutil.Process(run.pid).memory_full_info()
            return info.rss / MB, getattr(info, "pss", info.rss) / MB
    return 0.0, 0.0


def wait_idle(team: Team, name: str, timeout: float = 30.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = read_state(team.name, name)
        if state is not None and state.state == "idle" and state.pid:
            return state.pid
        time.sleep(0.05)
    raise Unavailable(f"{name} did not go idle within {timeout:.0f} s")


def spawn(team: Team, name: str, kind: Kind, env: dict[str, str], cwd: Path) -> None:
    proc = subprocess.run([SWARM, "spawn", name, "--team", team.name, "--backend", "hidden",
                           *kind.spawn], env={**os.environ, **env}, cwd=cwd,
                          capture_output=True, text=True, timeout=120, check=False)
    if proc.returncode != 0:
        raise Unavailable(f"spawn failed: {(proc.stderr.strip().splitlines() or ['?'])[-1]}")


def all_answered(lead: Mailbox, names: list[str], token: str, timeout: float) -> None:
    """Every one of `names` has answered with `token` (as `answered`, for a team)."""
    waiting = set(names)
    deadline = time.monotonic() + timeout
    while waiting and time.monotonic() < deadline:
        unread = lead.wait(timeout=1.0)
        waiting -= {m.sender for m in unread if token in m.text
                    and isinstance(m.structured(), IdleNotification | None)}
        lead.mark_read([m.id for m in unread])
    if waiting:
        raise Unavailable(f"no answer from {', '.join(sorted(waiting))} within {timeout:.0f} s")


def one_run(kind: Kind, number: int, path_env: dict[str, str], tree: Path = ROOT,
            size: int = 1) -> Run:
    label = "b" if tree != ROOT else "a"
    team = Team.create(f"bench-{kind.name.split()[0].replace(':', '-')}-{number}{label}{size}")
    home = HOME / f"home-{team.name}"
    home.mkdir()
    lead = team.inbox(LEAD_NAME, checked=False)
    names = [f"w{i}" for i in range(1, size + 1)]
    with kind.server() if kind.server else contextlib.nullcontext() as server:
        # Its tree's swarm in every process of the run; a hub left alone ends at once.
        env = {**kind.prepare(server, home), **path_env, "PYTHONPATH": str(tree),
               "SWARM_MCP_HUB_GRACE": "1"}
        try:
            start = time.perf_counter()
            spawn(team, names[0], kind, env, home)
            text = kind.answer(server, f"pong{number}a")
            team.send(names[0], text, summary="ping")
            answered(lead, names[0], f"pong{number}a", ANSWER_TIMEOUT)
            first = time.perf_counter() - start
            for name in names[1:]:
                spawn(team, name, kind, env, home)
            if size > 1:
                for name in names[1:]:
                    team.send(name, text, summary="ping")
                all_answered(lead, names[1:], f"pong{number}a", ANSWER_TIMEOUT)
            pids = [wait_idle(team, name) for name in names]
            text = kind.answer(server, f"pong{number}b")
            begun = time.perf_counter()
            for name in names:
                team.send(name, text, summary="ping")
            all_answered(lead, names, f"pong{number}b", ANSWER_TIMEOUT)
            again = time.perf_counter() - begun
            pids = [wait_idle(team, name) for name in names]
            time.sleep(SETTLE)
            trees = [tree_memory(pid) for pid in pids]
            hub_rss, hub_pss = hub_memory(team)
        finally:
            for name in names:
                stop(team, name)
    return Run(first, again, statistics.mean(t[0] for t in trees) + hub_rss / size,
               statistics.mean(t[1] for t in trees) + hub_pss / size,
               round(statistics.mean(t[2] for t in trees)), hub_pss,
               statistics.mean(t[3] for t in trees) + hub_pss / size)


def stop(team: Team, name: str) -> None:
    """SIGTERM the teammate (it stops its CLI) and wait for the whole tree to be gone."""
    state = read_state(team.name, name)
    if state is None or not state.pid or not is_alive(state.pid, state.started_at):
        return
    root = psutil.Process(state.pid)
    tree = [root, *root.children(recursive=True)]
    root.terminate()
    _, alive = psutil.wait_procs(tree, timeout=20)
    for proc in alive:  # not ours to leave behind
        with contextlib.suppress(psutil.NoSuchProcess):
            proc.kill()


def bench(kind: Kind, trees: list[Path], sizes: list[int], runs: int) -> list[Result]:
    """`runs` runs of `kind` for each tree and team size, the trees interleaved run by run."""
    results = {(tree, size): Result(kind, tree=_label(tree), size=size)
               for size in sizes for tree in trees}
    try:
        path_env = usable(kind)
        for size in sizes:
            for number in range(1, runs + 1):
                for tree in trees:
                    results[tree, size].runs.append(one_run(kind, number, path_env, tree, size))
    except Unavailable as exc:
        for result in results.values():
            result.unavailable = str(exc)
    return list(results.values())


def _label(tree: Path) -> str:
    return "after" if tree == ROOT else "before"


# -- the table ----------------------------------------------------------------------------------
def row(result: Result) -> list[str]:
    name = f"{result.kind.name} x{result.size} ({result.tree})"
    if result.unavailable is not None or not result.runs:
        return [name, f"not available: {result.unavailable}"]
    runs = result.runs

    def median(get: Callable[[Run], float]) -> float:
        return statistics.median(get(r) for r in runs)

    best = min(runs, key=lambda r: r.first)
    return [name, f"{median(lambda r: r.first):.2f} s ({best.first:.2f})",
            f"{median(lambda r: r.next) * 1000:.0f} ms", f"{median(lambda r: r.rss):.0f} MB",
            f"{median(lambda r: r.pss):.0f} MB", f"{median(lambda r: r.swarm_pss):.0f} MB",
            f"{median(lambda r: r.hub_pss):.0f} MB", f"{median(lambda r: r.processes):.0f}"]


def table(results: list[Result]) -> Iterator[str]:
    head = ["kind x teammates (swarm)", "spawn -> first answer (best)", "next answer",
            "idle RSS", "idle PSS", "swarm's PSS", "hub PSS", "processes"]
    rows = [row(r) for r in results]
    full = [r for r in rows if len(r) == len(head)]
    widths = [max(len(r[i]) for r in [head, *full]) for i in range(len(head))]
    for cells in [head, *rows]:
        if len(cells) < len(head):  # "not available": one cell after the name
            yield f"{cells[0].ljust(widths[0])}  {cells[1]}"
        else:
            yield "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("kinds", nargs="*", metavar="KIND")
    parser.add_argument("--swarm", type=Path, default=None,
                        help="another checkout to run too, interleaved (the code before)")
    parser.add_argument("--team-sizes", default="1", help="teammates per team, e.g. 1,4")
    parser.add_argument("--runs", type=int, default=RUNS)
    args = parser.parse_args(argv)
    wanted = [k for k in KINDS if not args.kinds or k.name.split()[0] in args.kinds]
    trees = [args.swarm.resolve(), ROOT] if args.swarm is not None else [ROOT]
    sizes = [int(n) for n in args.team_sizes.split(",")]
    # As a wheel install is: a source newer than its .pyc would be compiled at every start.
    for tree in trees:
        for package in ("swarm", "backends"):
            if (tree / package).is_dir():
                compileall.compile_dir(str(tree / package), quiet=1)
    try:
        results = [r for kind in wanted for r in bench(kind, trees, sizes, args.runs)]
    finally:
        shutil.rmtree(HOME, ignore_errors=True)
    print(f"swarm teammate kinds ({os.cpu_count()} cores, Python {sys.version.split()[0]};"
          f" median of {args.runs}; memory: each teammate's process tree, idle, plus its share"
          " of the team's MCP server)")
    for line in table(results):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
