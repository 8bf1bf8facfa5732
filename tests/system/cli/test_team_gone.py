"""A team whose document is gone: a corrupt `config.json` moved aside by its
first reader, the file deleted, a Redis restarted without persistence (FLUSHALL) or the team key
deleted. Its agents still run. Every command names the document and what to do; `swarm team
delete --force`, `swarm kill` and `swarm doctor --fix` stop the agents, found from their state
records; left alone, an agent leaves by itself after SWARM_TEAM_GONE_GRACE seconds.
Real `swarm agent` shell teammates, a real redis-server, the real CLI in subprocesses."""

from __future__ import annotations

import functools
import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import redis

from swarm.core.store import paths
from swarm.core.store.liveness import is_alive
from swarm.core.team.state import read_state
from swarm.core.team.team import Team
from tests.support.agent_fixtures import Crew, error_lines
from tests.support.cli_runner import run_swarm
from tests.support.helpers import one_line, turn_over, wait_until


@pytest.fixture(autouse=True)
def quick_heartbeats(monkeypatch: pytest.MonkeyPatch) -> None:
    """After a FLUSHALL the tests wait for the agents' next heartbeats (2 s apart by default)."""
    monkeypatch.setenv("SWARM_HEARTBEAT_INTERVAL", "0.3")


def _pids(crew: Crew, *names: str) -> dict[str, tuple[int, float | None]]:
    out = {}
    for name in names:
        state = crew.wait_state(name, "idle")
        assert state.pid is not None
        out[name] = (state.pid, state.started_at)
    return out


def _wait_gone(pid: tuple[int, float | None], what: str, timeout: float = 20.0) -> None:
    wait_until(lambda: not is_alive(*pid), timeout, message=f"{what} (pid {pid[0]}) stopped")


def _break(crew: Crew, how: str, store: str) -> str:
    """Make the team file vanish; returns what the error must name (the file or the key)."""
    name = crew.team.name
    if store == "file":
        config = paths.team_config(name)
        if how == "corrupt":
            config.write_text('{"name": "crew", "members": [')  # torn: the next reader moves it
        else:
            config.unlink()
        return str(config)
    client = redis.Redis.from_url(store)
    key = f"swarm:{name}:config"
    if how == "flushall":
        client.flushall()  # a restart without persistence: everything, the team key too
    elif how == "corrupt":
        client.set(key, b'{"name": "crew", "members": [')
    else:
        client.delete(key)
    return key


def _break_and_wait(crew: Crew, how: str, store: str) -> str:
    where = _break(crew, how, store)
    # After a FLUSHALL the agents' next heartbeats write their state again: what is left.
    wait_until(lambda: all(read_state(crew.team.name, n) is not None for n in crew.procs), 10,
               message="the agents' heartbeats wrote their state again")
    return where


def _two_then_break(crew: Crew, how: str, store: str) -> dict[str, tuple[int, float | None]]:
    crew.spawn("w1")
    crew.spawn("w2")
    pids = _pids(crew, "w1", "w2")
    _break_and_wait(crew, how, store)
    return pids


VARIANTS = [("file", "delete"), ("file", "corrupt"), ("redis", "delete"), ("redis", "flushall"),
            ("redis", "corrupt")]


@pytest.fixture(params=VARIANTS, ids=["-".join(v) for v in VARIANTS])
def broken(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    kind, how = request.param
    if kind == "file":
        monkeypatch.setenv("SWARM_STORE", "file")
        return "file", how
    return str(request.getfixturevalue("redis_url")), how


def _one_line_error(proc: object, *needles: str) -> str:
    # A corrupt document's first reader also warns that it moved it aside (its own line).
    lines = [x for x in error_lines(proc) if not x.startswith("swarm: warning: ")]  # type: ignore[arg-type]
    assert len(lines) == 1, lines
    line = lines[0]
    assert line.startswith("swarm: error: "), line
    for needle in needles:
        assert needle in line, (needle, line)
    assert "Traceback" not in line
    return line


def test_every_command_names_the_gone_document_and_what_to_do(
        broken: tuple[str, str], crew: Crew) -> None:
    store, how = broken
    crew.spawn("w1")
    (pid,) = _pids(crew, "w1").values()
    where = _break_and_wait(crew, how, store)
    team = crew.team.name
    for args in (("status",), ("send", "w1", "hello"), ("team", "show", team),
                 ("team", "delete", team)):
        proc = crew.cli(*args)
        assert proc.returncode == 1, (args, proc.stdout, proc.stderr)
        line = _one_line_error(proc, where, f"swarm team delete --force {team}")
        assert "no team named" not in line
    assert is_alive(*pid)  # nothing was stopped by a refusal


def test_a_team_that_never_existed_is_still_bad_input(crew: Crew) -> None:
    proc = crew.cli("status", "--team", "nosuchteam")
    assert proc.returncode == 2
    _one_line_error(proc, "no team named 'nosuchteam'")


@pytest.mark.parametrize("how", ["delete", "corrupt", "flushall"])
def test_team_delete_force_stops_the_agents_of_a_gone_team(
        store: str, how: str, crew: Crew) -> None:
    if store == "file" and how == "flushall":
        pytest.skip("a Redis command")
    pids = _two_then_break(crew, how, store)
    proc = crew.cli("team", "delete", "--force", crew.team.name)
    assert proc.returncode == 0, proc.stderr
    for name, pid in pids.items():
        _wait_gone(pid, name)
    assert "w1" in proc.stdout + proc.stderr and "w2" in proc.stdout + proc.stderr
    if store == "file":
        assert not paths.team_dir(crew.team.name).exists()


@pytest.mark.parametrize("how", ["delete", "corrupt"])
def test_kill_stops_one_agent_of_a_gone_team(store: str, how: str, crew: Crew) -> None:
    pids = _two_then_break(crew, how, store)
    proc = crew.cli("kill", "w1", "--team", crew.team.name)
    assert proc.returncode == 0, proc.stderr
    _wait_gone(pids["w1"], "w1")
    assert is_alive(*pids["w2"])  # only the one named
    unknown = crew.cli("kill", "nobody", "--team", crew.team.name)
    assert unknown.returncode == 2
    _one_line_error(unknown, "nobody")


@pytest.mark.parametrize("how", ["delete", "corrupt"])
def test_doctor_fix_stops_the_agents_of_a_gone_team(store: str, how: str, crew: Crew) -> None:
    crew.spawn("w1")
    pids = _pids(crew, "w1")
    _break_and_wait(crew, how, store)
    report = json.loads(crew.cli("doctor", "--json").stdout)
    found = [f for f in report["findings"] if f["kind"] == "team_gone"]
    assert [f["team"] for f in found] == [crew.team.name], report["findings"]
    assert "w1" in found[0]["detail"] and found[0]["fix"]
    assert is_alive(*pids["w1"])  # without --fix nothing is changed
    fixed = json.loads(crew.cli("doctor", "--json", "--fix").stdout)
    gone = [f for f in fixed["findings"] if f["kind"] == "team_gone"]
    assert gone and gone[0]["fixed"], gone
    _wait_gone(pids["w1"], "w1")


@pytest.mark.parametrize("how", ["delete", "corrupt"])
def test_an_agent_whose_team_document_is_gone_leaves_after_the_grace(
        store: str, how: str, crew: Crew, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_TEAM_GONE_GRACE", "1")
    monkeypatch.setenv("SWARM_HEARTBEAT_INTERVAL", "0.3")
    crew.spawn("w1")
    pids = _pids(crew, "w1")
    _break(crew, how, store)
    _wait_gone(pids["w1"], "w1")
    assert crew.exit_code("w1") == 0  # a clean exit, not a crash
    state = read_state(crew.team.name, "w1")
    assert state is not None and state.state == "exited", state
    assert state.detail and "team_gone" in state.detail, state.detail
    assert "team file" in crew.log("w1")


def _take_away(crew: Crew, store: str) -> Callable[[], object]:
    """Remove the team file; returns what puts it back as it was."""
    if store == "file":
        config = paths.team_config(crew.team.name)
        saved = config.read_bytes()
        config.unlink()
        return functools.partial(config.write_bytes, saved)
    client, key = redis.Redis.from_url(store), f"swarm:{crew.team.name}:config"
    saved_key = client.get(key)
    assert isinstance(saved_key, bytes)
    client.delete(key)
    return functools.partial(client.set, key, saved_key)


def test_a_document_back_within_the_grace_keeps_the_agent(
        store: str, crew: Crew, monkeypatch: pytest.MonkeyPatch) -> None:
    """A document missing for a moment (restored by hand, a store failing over) is not taken
    for a gone team."""
    monkeypatch.setenv("SWARM_TEAM_GONE_GRACE", "30")
    monkeypatch.setenv("SWARM_HEARTBEAT_INTERVAL", "0.3")
    crew.spawn("w1")
    pids = _pids(crew, "w1")
    restore = _take_away(crew, store)
    wait_until(lambda: "team file" in crew.log("w1"), 10,
               message=f"w1 noticed the document gone (log: {crew.log('w1')[-400:]})")
    restore()
    wait_until(lambda: "staying" in crew.log("w1"), 10, message="w1 saw it back")
    assert is_alive(*pids["w1"])
    crew.send("w1", "$ echo still-here")
    crew.wait_idle_notes("w1", 1)


def test_the_grace_setting_is_a_number(monkeypatch: pytest.MonkeyPatch) -> None:
    from swarm import settings
    from swarm.errors import BadInputError

    monkeypatch.setenv("SWARM_TEAM_GONE_GRACE", "soon")
    with pytest.raises(BadInputError, match="SWARM_TEAM_GONE_GRACE"):
        settings.team_gone_grace()
    monkeypatch.delenv("SWARM_TEAM_GONE_GRACE")
    assert settings.team_gone_grace() == 60.0


def test_a_state_without_a_start_time_never_gets_its_pid_killed(tmp_path: Path) -> None:
    """The stand-in members come from state records: one with a bare pid (no process start
    time) may name anyone's process by now, so nothing signals it."""
    from swarm.core.records.state import AgentState
    from swarm.core.team.state import write_state

    team = Team.create("strays")
    bystander = subprocess.Popen(["sleep", "60"])
    try:
        write_state(team.name, "w1", AgentState(state="idle", pid=bystander.pid))
        paths.team_config(team.name).unlink()
        doctor = run_swarm("doctor", "--json", "--fix")
        found = [f for f in json.loads(doctor.stdout)["findings"] if f["kind"] == "team_gone"]
        assert found and not found[0]["fix"], found
        deleted = run_swarm("team", "delete", "--force", team.name)
        assert deleted.returncode == 0, deleted.stderr
        assert bystander.poll() is None and not paths.team_dir(team.name).exists()
    finally:
        bystander.kill()
        bystander.wait()


def test_status_of_a_team_removed_by_hand_says_what_still_runs(
        crew: Crew, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # Beats far apart: its state is not written again while we look.
    monkeypatch.setenv("SWARM_HEARTBEAT_INTERVAL", "60")
    result = crew.spawn("w1")
    wait_until(lambda: turn_over(crew.team.name, "w1"), 15, message="w1 idle")
    # Moved away whole (one rename: the agent may write a file there as rmtree walks it).
    paths.team_dir(crew.team.name).rename(tmp_path / "removed-by-hand")
    proc = crew.cli("status")
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    line = one_line(proc.stderr)
    assert f"w1 (pid {result.pid}) still runs" in line, line
    assert "no agent of it runs" not in line and "no team named" not in line, line
    # ... and `swarm kill` finds it by its process.
    killed = crew.cli("kill", "w1")
    assert killed.returncode == 0, killed.stderr
    assert crew.exit_code("w1") != 0


def test_a_teammate_whose_team_folder_goes_mid_claim_waits_instead_of_crashing(
        crew: Crew, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The folder moved away between a claim's mkdir and its lock's open (seen once in a busy
    run of the test above: w1 crashed on ENOENT and `swarm status` rightly found nothing
    running). Made certain here: the task list's lock is a link into nowhere, so the claim's
    open fails as the rename made it fail; a change in the moved folder wakes w1 to claim."""
    monkeypatch.setenv("SWARM_HEARTBEAT_INTERVAL", "60")
    result = crew.spawn("w1")
    wait_until(lambda: turn_over(crew.team.name, "w1"), 15, message="w1 idle")
    moved = tmp_path / "removed-by-hand"
    paths.team_dir(crew.team.name).rename(moved)
    # w1 is awake (its folder moved) and may make the new folder and its lock meanwhile: the
    # link replaces whatever is there, in one step.
    paths.tasks_dir(crew.team.name).mkdir(parents=True, exist_ok=True)
    link = paths.tasks_dir(crew.team.name) / "lock-link"
    link.symlink_to(tmp_path / "nowhere" / "lock")
    link.replace(paths.tasks_lock(crew.team.name))
    (moved / "tasks" / "1.json").write_text("{}")  # its watch follows the folder it watched
    log = moved / "agents" / "w1" / "agent.log"
    said = wait_until(lambda: re.search(r"task list is gone|crashed.*", log.read_text()), 15,
                      message="w1 to try its claim")
    assert not said[0].startswith("crashed"), said[0]
    assert is_alive(result.pid)
    status = crew.cli("status")
    assert f"w1 (pid {result.pid}) still runs" in one_line(status.stderr), status.stderr

