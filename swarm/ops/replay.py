"""`--record DIR` and `swarm replay DIR`: a team job kept, then run again offline.

A recording is a directory: run.json (the command as it was run: `lead`, `spawn` or `demo`,
its options, the working directory) and one JSON Lines file per member (runtime/models/
recording.py). A replay runs the same command again in a new team with SWARM_REPLAY set: every
member (the lead, each teammate it spawns) answers from its file instead of a model, and
writes what matched to a scratch directory this module reads back into the report.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from msgspec import Struct, field
from msgspec.structs import asdict

from swarm.backends.hidden import swarm_argv
from swarm.core.store.disk import ensure_dir, write_bytes_atomic
from swarm.core.team.team import Team
from swarm.core.trust.secrets import redact
from swarm.errors import BadInputError
from swarm.ops.member.control import delete_team
from swarm.runtime.models.recording import read_recording

RUN_FILE = "run.json"
COMMANDS = ("lead", "spawn", "demo")
POLL = 0.2  # seconds between looks at a spawned member's progress


def begin_recording(directory: Path, argv: list[str], cwd: Path) -> Path:
    """Make DIR (0700), keep the command in run.json, and set SWARM_RECORD so this process
    and every member it starts record their model calls there. `argv`: the swarm command
    without `--record`, positional arguments after `--`."""
    directory = directory.expanduser().absolute()
    if directory.exists() and not directory.is_dir():
        raise BadInputError(f"--record {directory}: not a directory")
    if directory.is_dir() and any(directory.glob("*.jsonl")):
        raise BadInputError(f"--record {directory} already holds a recording: give a new"
                            " directory (a replay of it: `swarm replay DIR`)")
    ensure_dir(directory)
    # A credential on the command line (a prompt) is kept as *** like the requests are.
    data = {"argv": [redact(word) for word in argv], "cwd": str(cwd), "recorded_at": time.time()}
    write_bytes_atomic(directory / RUN_FILE, json.dumps(data, indent=1).encode())
    os.environ["SWARM_RECORD"] = str(directory)
    return directory


class MemberReplay(Struct, dict=True):
    member: str
    recorded: int  # requests in the recording
    made: int  # requests the replay made
    matched: int
    request: int | None = None  # the first that diverged (1-based)
    what: str | None = None
    recorded_text: str | None = field(default=None, name="recorded_snippet")
    now: str | None = None
    timing: bool = False  # the first difference is the lead waking at another moment


class ReplayReport(Struct, dict=True):
    directory: str
    command: str
    team: str | None
    exit_code: int  # of the command run again
    seconds: float
    members: list[MemberReplay]

    @property
    def diverged(self) -> list[MemberReplay]:
        """Members whose first difference is more than timing (what exit 1 means)."""
        return [m for m in self.members if m.request is not None and not m.timing]

    @property
    def timing(self) -> list[MemberReplay]:
        return [m for m in self.members if m.request is not None and m.timing]

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["members"] = [asdict(m) for m in self.members]
        out["diverged"] = [{"member": m.member, "request": m.request, "what": m.what,
                            "recorded": m.recorded_text, "now": m.now} for m in self.diverged]
        out["timing"] = [{"member": m.member, "request": m.request, "what": m.what}
                         for m in self.timing]
        return out


def load_run(directory: Path) -> dict[str, Any]:
    try:
        run = json.loads((directory / RUN_FILE).read_text())
    except FileNotFoundError:
        raise BadInputError(f"{directory}: no recording here (no {RUN_FILE}; record one with"
                            " `swarm lead --record DIR`, `swarm spawn --record DIR` or"
                            " `swarm demo --record DIR`)") from None
    except (OSError, ValueError) as exc:
        raise BadInputError(f"{directory}/{RUN_FILE} cannot be read: {exc}") from None
    argv = run.get("argv") if isinstance(run, dict) else None
    if not isinstance(argv, list) or not argv or argv[0] not in COMMANDS:
        raise BadInputError(f"{directory}/{RUN_FILE}: not a recorded swarm lead, spawn or demo")
    return run


def recorded_team(directory: Path) -> str:
    for path in sorted(directory.glob("*.jsonl")):
        calls = read_recording(path)
        if calls and calls[0].get("team"):
            return str(calls[0]["team"])
    return "replay"


def _fresh_team(base: str) -> str:
    taken = {t.name for t in Team.list()}
    n = 1
    while f"{base}-replay{n}" in taken:
        n += 1
    return f"{base}-replay{n}"


def _with_team(argv: list[str], team: str, prompt: str | None) -> list[str]:
    """The recorded command in team `team` (and with a new prompt for a lead)."""
    out, skip = [], False
    options, _, positional = (argv[:argv.index("--")], "--", argv[argv.index("--") + 1:]
                              ) if "--" in argv else (argv, "--", [])
    for word in options:
        if skip:
            skip = False
        elif word in ("--team", "-t"):
            skip = True
        elif not word.startswith("--team="):
            out.append(word)
    if prompt is not None:
        if argv[0] != "lead":
            raise BadInputError("--prompt replaces a recorded lead's prompt; this recording is"
                                f" `swarm {argv[0]}` (change its prompt in the project instead)")
        positional = [prompt]
    return [*out, "--team", team, "--", *positional]


def run_replay(directory: Path, team: str | None = None, prompt: str | None = None,
               timeout: float = 300.0) -> ReplayReport:
    """Run the recorded command again, offline, and report each member's match."""
    directory = directory.expanduser().absolute()
    run = load_run(directory)
    argv: list[str] = list(run["argv"])
    command = argv[0]
    if command == "demo":
        if team is not None or prompt is not None:
            raise BadInputError("a recorded demo replays as it ran: no --team or --prompt")
    else:
        team = team or _fresh_team(recorded_team(directory))
        if team in {t.name for t in Team.list()}:
            raise BadInputError(f"team {team!r} exists: give the replay a new --team")
        argv = _with_team(argv, team, prompt)
    scratch = Path(tempfile.mkdtemp(prefix="swarm-replay-"))
    env = {k: v for k, v in os.environ.items() if k != "SWARM_RECORD"}
    env.update(SWARM_REPLAY=str(directory), SWARM_REPLAY_OUT=str(scratch))
    cwd = run.get("cwd") or os.getcwd()
    if not Path(cwd).is_dir():
        cwd = os.getcwd()
    started = time.monotonic()
    if command == "spawn":
        assert team is not None
        Team.create(team, description=f"replay of {directory}")
    try:
        proc = subprocess.run([*swarm_argv(), *argv], env=env, cwd=cwd, timeout=timeout,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True)
        code = proc.returncode
        if command == "spawn" and code == 0:
            _wait_for_members(directory, scratch, started + timeout)
    except subprocess.TimeoutExpired:
        code = 124
    # Read before a spawned member is stopped: what stopping it asks is not in the recording.
    members = [_member_result(path, scratch) for path in sorted(directory.glob("*.jsonl"))]
    seconds = time.monotonic() - started
    if command == "spawn":
        assert team is not None
        _stop(team)
    shutil.rmtree(scratch, ignore_errors=True)
    return ReplayReport(str(directory), command, team, code, seconds, members)


def _progress(scratch: Path, member: str) -> dict[str, Any]:
    try:
        data = json.loads((scratch / f"{member}.json").read_text())
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _wait_for_members(directory: Path, scratch: Path, deadline: float) -> None:
    """A spawned teammate idles after its last recorded reply: wait until each has made its
    recorded requests (or diverged past them), then the replay stops it."""
    wanted = {p.stem: len(read_recording(p)) for p in directory.glob("*.jsonl")}
    while time.monotonic() < deadline:
        if all(_progress(scratch, m).get("made", 0) >= n for m, n in wanted.items()):
            return
        time.sleep(POLL)


def _stop(team: str) -> None:
    """Stopped, not asked: a shutdown request past the end of the recording has no recorded
    answer, so asking only waited out its timeout."""
    delete_team(team, force=True)


def _member_result(path: Path, scratch: Path) -> MemberReplay:
    member = path.stem
    recorded = len(read_recording(path))
    done = _progress(scratch, member)
    made, matched = int(done.get("made", 0)), int(done.get("matched", 0))
    result = MemberReplay(member, recorded, made, matched)
    found = done.get("divergence")
    if isinstance(found, dict):
        result.request, result.what = done.get("request"), str(found.get("what"))
        result.recorded_text, result.now = str(found.get("recorded")), str(found.get("now"))
        result.timing = bool(found.get("timing"))
    elif made < recorded:
        result.request, result.what = made + 1, "fewer requests"
        result.recorded_text, result.now = f"{recorded} requests", f"{made} requests"
    return result
