"""A replaying lead wakes as the recording's lead woke (swarm.lead.replay_wakes), on real team
files and a real recording, without processes: the wake policy of one team is recorded, then a
second team's teammates deliver the same messages at other moments (the CI flake of
test_replay: a wake at a status change answered with the recorded reply to the quiet team)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from swarm.core.team.team import Team
from swarm.lead import replay_wakes
from swarm.lead.replay_wakes import ReplayedWakes
from swarm.lead.wake_policy import Wake, Watch
from swarm.runtime.models.base import ModelRequest
from swarm.runtime.models.recording import ReplayModel
from tests.support.wake_helpers import Recorder, idle, set_state, texts, woken


def crew(name: str) -> Team:
    team = Team.create(name)
    team.add_member("alice", model="shell")
    set_state(team, "alice", "working")
    return team


def request(wake: Wake) -> dict[str, Any]:
    return {"model": "sonnet", "system": "", "tools": [], "max_tokens": 4096,
            "messages": [{"role": "user", "content": wake.blocks}]}


def record(tmp_path: Path, wakes: list[Wake], team: str = "rec") -> Path:
    """The lead's recording: one call per wake, its input being that wake's blocks."""
    path = tmp_path / "rec" / "team-lead.jsonl"
    path.parent.mkdir()
    lines = [json.dumps({"team": team, "request": request(w), "reply": {"content": [
        {"type": "text", "text": "Noted."}], "stop_reason": "end_turn"}}) for w in wakes]
    path.write_text("".join(line + "\n" for line in lines))
    return path


def steered(team: Team, recording: Path, tmp_path: Path) -> tuple[Watch, ReplayModel]:
    out = tmp_path / "scratch"
    out.mkdir()
    model = ReplayModel("team-lead", team.name, recording, out / "team-lead.json")
    watch = Watch(team, "human", Recorder())
    watch.steer = ReplayedWakes(model, team.name, out)
    return watch, model


def answer(model: ReplayModel, wake: Wake) -> None:
    """The lead's call with this wake as its input: the replay's next recorded reply."""
    wake.done()
    model.complete(ModelRequest("", [{"role": "user", "content": wake.blocks}], []))


def test_a_wake_waits_until_the_team_is_quiet_as_in_the_recording(tmp_path: Path) -> None:
    rec = crew("rec")
    rec.send("team-lead", "one", sender="alice")
    rec.send("team-lead", "two", sender="alice")
    idle(rec, "alice", "Done.")
    recorded = woken(Watch(rec, "human", Recorder()))
    assert recorded is not None and recorded.reasons == ["message", "message", "quiet"]

    team = crew("again")
    watch, model = steered(team, record(tmp_path, [recorded]), tmp_path)
    team.send("team-lead", "one", sender="alice")
    assert woken(Watch(team, "human", Recorder())) is not None  # unsteered: it wakes (after the settle window)
    assert watch.next_wake() is None  # held: the recording's wake held more
    team.send("team-lead", "two", sender="alice")
    assert watch.next_wake() is None  # both messages, but alice still works: not quiet yet
    idle(team, "alice", "Done.")
    found = watch.next_wake()
    assert found is not None and found.reasons == ["message", "message", "quiet"]
    assert texts(found) == [t.replace("rec", "again") for t in texts(recorded)]
    answer(model, found)
    assert (model.made, model.matched, model.divergence) == (1, 1, None)


def test_what_came_sooner_waits_for_the_next_wake_as_in_the_recording(tmp_path: Path) -> None:
    rec = crew("rec")
    record_watch = Watch(rec, "human", Recorder())
    rec.send("team-lead", "one", sender="alice")
    first = woken(record_watch)
    assert first is not None and first.reasons == ["message"]
    first.done()
    rec.send("team-lead", "two", sender="alice")
    idle(rec, "alice", "Done.")
    second = woken(record_watch)
    assert second is not None and second.reasons == ["message", "quiet"]

    team = crew("again")  # here everything is there at the first look
    watch, model = steered(team, record(tmp_path, [first, second]), tmp_path)
    team.send("team-lead", "one", sender="alice")
    team.send("team-lead", "two", sender="alice")
    idle(team, "alice", "Done.")
    found = watch.next_wake()
    assert found is not None and found.reasons == ["message"]  # told as a status change
    assert texts(found)[0].startswith("<team-status>") and "one" in texts(found)[1]
    answer(model, found)
    found = watch.next_wake()
    assert found is not None and found.reasons == ["message", "quiet"]  # the quiet wake still
    assert "two" in texts(found)[1]
    answer(model, found)
    assert (model.made, model.matched, model.divergence) == (2, 2, None)
    assert watch.next_wake() is None and watch.finished()


def one_and_two_recorded(tmp_path: Path) -> tuple[Team, Watch, ReplayModel]:
    """A recorded wake with alice's messages one and two; the replay's team and its steered
    wake policy."""
    rec = crew("rec")
    rec.send("team-lead", "one", sender="alice")
    rec.send("team-lead", "two", sender="alice")
    recorded = woken(Watch(rec, "human", Recorder()))
    assert recorded is not None
    team = crew("again")
    return team, *steered(team, record(tmp_path, [recorded]), tmp_path)


def test_a_held_wake_goes_after_the_longest_hold(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    team, watch, _ = one_and_two_recorded(tmp_path)
    team.send("team-lead", "one", sender="alice")
    assert watch.next_wake() is None
    monkeypatch.setattr(replay_wakes, "HOLD_AT_MOST", 0.0)
    found = watch.next_wake()
    assert found is not None and found.reasons == ["message"]  # the timing shows in the report


def test_what_the_recording_never_had_waits_for_the_recorded_wake(tmp_path: Path) -> None:
    team, watch, model = one_and_two_recorded(tmp_path)
    team.send("team-lead", "something else", sender="alice")
    assert watch.next_wake() is None  # held: one and two are still to come
    team.send("team-lead", "two", sender="alice")
    team.send("team-lead", "one", sender="alice")
    found = watch.next_wake()  # in the recorded order, though two came first
    assert found is not None and [t.split(">")[1] for t in texts(found)[1:]] == [
        "one</teammate-message", "two</teammate-message"]
    answer(model, found)
    assert (model.made, model.matched) == (1, 1)
    found = watch.next_wake()  # past the recording's end: as it is
    assert found is not None and "something else" in texts(found)[1]


def test_nothing_is_held_for_a_message_given_already_or_once_a_member_diverged(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rec = crew("rec")
    record_watch = Watch(rec, "human", Recorder())
    rec.send("team-lead", "a", sender="alice")
    first = woken(record_watch)
    assert first is not None
    first.done()
    rec.send("team-lead", "b", sender="alice")
    rec.send("team-lead", "c", sender="alice")
    second = woken(record_watch)
    assert second is not None
    second.done()
    rec.send("team-lead", "d", sender="alice")
    third = woken(record_watch)
    assert third is not None

    team = crew("again")
    watch, model = steered(team, record(tmp_path, [first, second, third]), tmp_path)
    team.send("team-lead", "b", sender="alice")
    assert watch.next_wake() is None  # waits for a
    monkeypatch.setattr(replay_wakes, "HOLD_AT_MOST", 0.0)
    found = watch.next_wake()  # the longest hold is over: b goes, as timing
    assert found is not None and "b<" in texts(found)[1]
    answer(model, found)
    monkeypatch.setattr(replay_wakes, "HOLD_AT_MOST", 10.0)
    team.send("team-lead", "c", sender="alice")
    found = watch.next_wake()  # the recorded wake's b was given already: no hold for it
    assert found is not None and "c<" in texts(found)[1]
    answer(model, found)
    team.send("team-lead", "x", sender="alice")
    assert watch.next_wake() is None  # waits for d
    (tmp_path / "scratch" / "bob.json").write_text(json.dumps({"divergence": {
        "what": "message 3 (user) text", "recorded": "a", "now": "b", "timing": False}}))
    found = watch.next_wake()  # bob went another way: nothing is held any more
    assert found is not None and "x<" in texts(found)[1]


def test_arrivals_in_a_turn_are_only_what_reached_that_call_in_the_recording(
        tmp_path: Path) -> None:
    rec = crew("rec")
    rec.send("team-lead", "one", sender="alice")
    recorded = woken(Watch(rec, "human", Recorder()))
    assert recorded is not None
    tool_results = {"model": "sonnet", "system": "", "tools": [], "max_tokens": 4096,
                    "messages": [{"role": "user", "content": [{"type": "tool_result",
                                  "tool_use_id": "toolu_1", "content": "ok"}]}]}
    path = record(tmp_path, [recorded])
    path.write_text(json.dumps({"team": "rec", "request": tool_results, "reply": {
        "content": []}}) + "\n" + path.read_text())
    team = crew("again")
    watch, model = steered(team, path, tmp_path)
    team.send("team-lead", "one", sender="alice")
    assert watch.arrivals() is None  # the recording's call had no arrivals: it waits
    model.made = 1  # that call was made; the next is the recorded wake
    found = watch.next_wake()
    assert found is not None and "one" in texts(found)[1]
