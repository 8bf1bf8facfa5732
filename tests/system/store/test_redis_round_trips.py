"""Round trips on the network store: what one send and one inbox read ask of the
server, counted on a real redis-server with MONITOR. A request is one command, or one
MULTI...EXEC pipeline; what a server-side script runs inside is not a round trip."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator

import pytest
import redis

from swarm.core.team.team import Team
from swarm.errors import NotFoundError, UnknownRecipientError
from tests.support.cli_runner import run_swarm
from tests.support.helpers import wait_until


class Monitor:
    """Every command the server runs, from a MONITOR connection of its own."""

    def __init__(self, url: str) -> None:
        self.seen: list[tuple[str, str]] = []  # (client type, command)
        self._client = redis.Redis.from_url(url)
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._listen, daemon=True)
        self._thread.start()
        assert self._ready.wait(60)

    def _listen(self) -> None:
        with self._client.monitor() as monitor:
            self._ready.set()
            try:
                for command in monitor.listen():
                    self.seen.append((command.get("client_type", ""), command["command"]))
            except redis.exceptions.ConnectionError:
                return

    def requests(self, action: Callable[[], object]) -> list[str]:
        """The requests `action` sent, between two markers (ECHO) of this monitor's own."""
        begin, end = f"mark-{uuid.uuid4()}", f"mark-{uuid.uuid4()}"
        marker = self._client
        marker.echo(begin)
        action()
        marker.echo(end)
        wait_until(lambda: any(end in c for _, c in self.seen), timeout=60)
        commands = [c for _, c in self.seen]
        start = next(i for i, c in enumerate(commands) if begin in c)
        stop = next(i for i, c in enumerate(commands) if end in c)
        picked = [(t, c) for t, c in self.seen[start + 1:stop] if t != "lua"]
        out: list[str] = []
        in_multi = False
        for _type, command in picked:
            verb = command.split(" ", 1)[0].upper()
            if in_multi:
                in_multi = verb != "EXEC"
                continue
            in_multi = verb == "MULTI"
            out.append("MULTI/EXEC" if in_multi else verb)
        return out


@pytest.fixture
def monitor(redis_url: str) -> Iterator[Monitor]:
    watching = Monitor(redis_url)
    yield watching


def _team() -> Team:
    team = Team.create("rt")
    for name in ("owner", "w", "v"):
        team.add_member(name)
    return team


def _warm(team: Team) -> None:
    """The server knows the scripts and the handle has read the team file once."""
    team.send("owner", "warm", sender="w")
    box = team.inbox("owner")
    box.mark_read([m.id for m in box.unread()])


def test_a_send_is_one_request(monitor: Monitor, redis_url: str) -> None:
    team = _team()
    _warm(team)
    assert monitor.requests(lambda: team.send("owner", "hello", sender="w")) == ["EVALSHA"]
    assert [m.text for m in team.inbox("owner").unread()] == ["hello"]


def test_a_broadcast_is_one_request_and_lands_in_every_mailbox(monitor: Monitor,
                                                              redis_url: str) -> None:
    team = _team()
    _warm(team)
    assert monitor.requests(lambda: team.send("*", "all", sender="w")) == ["EVALSHA"]
    for name in ("team-lead", "owner", "v"):
        assert [m.text for m in team.inbox(name).unread()] == ["all"]
    assert team.inbox("w").unread() == []


def test_swarm_send_from_a_fresh_handle_is_two_requests(monitor: Monitor,
                                                        redis_url: str) -> None:
    team = _team()
    _warm(team)
    # What `swarm send` does: open the team (read its file), then send.
    assert monitor.requests(
        lambda: Team.open(team.name).send("owner", "x", sender="w")) == ["MULTI/EXEC", "EVALSHA"]


def test_reading_then_marking_read_is_two_requests(monitor: Monitor, redis_url: str) -> None:
    team = _team()
    _warm(team)
    team.send("owner", "one", sender="w")
    team.send("owner", "two", sender="v")
    box = team.inbox("owner")

    def read_and_mark() -> None:
        unread = box.unread()
        assert [m.text for m in unread] == ["one", "two"]
        box.mark_read([m.id for m in unread])

    assert monitor.requests(read_and_mark) == ["EVALSHA", "EVALSHA"]
    assert box.unread() == []


def test_a_member_removed_elsewhere_gets_no_message_from_a_cached_handle(
        redis_url: str) -> None:
    team = _team()
    _warm(team)  # this handle now holds the team file with `v` in it
    Team.open(team.name).remove_member("v")
    with pytest.raises(UnknownRecipientError):
        team.send("v", "hello", sender="w")
    keys = redis.Redis.from_url(redis_url).keys(f"swarm:{team.name}:inbox:v")
    assert keys == []  # no phantom mailbox
    # A member added elsewhere is reachable at once from the same handle.
    Team.open(team.name).add_member("late")
    team.send("late", "welcome", sender="w")
    assert [m.text for m in team.inbox("late").unread()] == ["welcome"]


def test_a_sender_removed_elsewhere_cannot_send_from_a_cached_handle(redis_url: str) -> None:
    team = _team()
    _warm(team)
    Team.open(team.name).remove_member("w")
    with pytest.raises(UnknownRecipientError):
        team.send("owner", "hello", sender="w")
    assert team.inbox("owner").unread() == []


def test_a_team_deleted_elsewhere_is_gone_for_a_cached_handle(redis_url: str) -> None:
    team = _team()
    _warm(team)
    Team.delete(team.name, force=True)
    with pytest.raises(NotFoundError):
        team.send("owner", "hello", sender="w")
    assert redis.Redis.from_url(redis_url).keys("*") == []  # nothing written back


def test_a_blocked_watcher_in_the_same_process_does_not_hold_up_a_send(redis_url: str) -> None:
    team = _team()
    _warm(team)
    woke: list[bool] = []
    with team.inbox("owner").watcher() as watcher:
        reader = threading.Thread(target=lambda: woke.append(watcher.wait(30.0)), daemon=True)
        reader.start()
        # The watcher's XREAD is blocked on the server now.
        wait_until(lambda: _blocked(redis_url), timeout=60)
        team.send("owner", "through", sender="w")  # its own connection from the pool
        reader.join(60)
    assert woke == [True]
    assert [m.text for m in team.inbox("owner").unread()] == ["through"]


def _blocked(url: str) -> bool:
    return any(c.get("cmd") == "xread" for c in redis.Redis.from_url(url).client_list())


def test_a_swarm_send_process_is_three_requests_its_connection_included(
        monitor: Monitor, redis_url: str, swarm_home: object) -> None:
    team = _team()
    _warm(team)
    sent = monitor.requests(lambda: run_swarm("send", "owner", "from a shell", "--team", team.name))
    # A new process: its connection needs no handshake (RESP2, no HELLO), then open the team,
    # send, and (the message in) look whether the recipient is stopped, for the hint.
    assert sent == ["MULTI/EXEC", "EVALSHA", "GET"]
    assert [m.text for m in team.inbox("owner").unread()] == ["from a shell"]
