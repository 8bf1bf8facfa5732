"""Record and replay a member's model calls (`--record DIR`, `swarm replay DIR`).

Recording wraps whatever model a member runs: each call appends one JSON line to
DIR/<member>.jsonl (0600, credentials redacted): the request (system, messages, tools, model)
and the reply (content blocks, stop reason, usage). The directory reaches every teammate a
lead spawns through SWARM_RECORD (passed on with the other SWARM_ variables).

Replaying (SWARM_REPLAY=DIR) replaces the member's model: call i gets recorded reply i, after
request i is compared with recorded request i (normalised: replay_diff.py). The first
difference is kept as the member's divergence and the member goes on with the recorded replies
(the run ends as it did, and every member's first divergence is found in one replay). What
matched and where it diverged is written to SWARM_REPLAY_OUT/<member>.json after each call.
No provider is called: in a replay, a model no recording stands for refuses.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import msgspec

from swarm import settings
from swarm.core.store.disk import append_line, write_bytes_atomic
from swarm.core.trust.secrets import redact
from swarm.runtime.models.base import Model, ModelReply, ModelRequest
from swarm.runtime.models.replay_diff import (
    Difference,
    first_difference,
    last_input,
    translate_reply,
)

END_OF_RECORDING = "(end of the recording)"


def recording_path(directory: str | Path, member: str) -> Path:
    return Path(directory) / f"{member}.jsonl"


def request_data(request: ModelRequest, model: str) -> dict[str, Any]:
    data = {"model": model, "system": request.system, "messages": request.messages,
            "tools": request.tools, "max_tokens": request.max_tokens}
    return {**data, "effort": request.effort} if request.effort else data


def read_recording(path: Path) -> list[dict[str, Any]]:
    """The calls of one member, in order (a line that does not parse ends it: a torn write)."""
    calls: list[dict[str, Any]] = []
    try:
        lines = path.read_text().splitlines()
    except FileNotFoundError:
        return calls
    for line in lines:
        try:
            calls.append(json.loads(line))
        except json.JSONDecodeError:
            break
    return calls


def _redacted(value: Any) -> Any:
    """Every string in `value` redacted (before JSON escapes a secret's quote or backslash)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: _redacted(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted(v) for v in value]
    return value


class RecordingModel:
    """Any model, with each call appended to the member's file."""

    def __init__(self, inner: Model, path: Path, team: str) -> None:
        self.inner, self.path, self.team = inner, path, team
        self.name = inner.name
        self._lock = threading.Lock()  # a lead's turn and its wake check may overlap

    def __getattr__(self, attr: str) -> Any:  # provider, sibling: as the wrapped model
        return getattr(self.inner, attr)

    def complete(self, request: ModelRequest) -> ModelReply:
        reply = self.inner.complete(request)
        entry = {"team": self.team, "request": request_data(request, self.name),
                 "reply": msgspec.to_builtins(reply)}
        line = json.dumps(_redacted(entry), ensure_ascii=False) + "\n"
        with self._lock:
            append_line(self.path, line.encode())
        return reply


class ReplayModel:
    """A member's recorded replies, in order, each after its request is compared."""

    def __init__(self, member: str, team: str, recording: Path, out: Path) -> None:
        self.member, self.team, self.out = member, team, out
        self.calls = read_recording(recording)
        self.name = str(self.calls[0]["request"]["model"]) if self.calls else "replay"
        self._lock = threading.Lock()
        self.made, self.matched = 0, 0
        self.divergence: Difference | None = None
        self.diverged_at: int | None = None
        try:  # a respawned member goes on where its last process stopped
            done = json.loads(out.read_text())
            self.made, self.matched = int(done["made"]), int(done["matched"])
            if done.get("divergence"):
                self.divergence = Difference(**done["divergence"])
                self.diverged_at = int(done["request"])
        except (OSError, ValueError, KeyError, TypeError):
            pass

    def complete(self, request: ModelRequest) -> ModelReply:
        with self._lock:
            index = self.made
            self.made += 1
            if index >= len(self.calls):
                self._diverge(index, Difference("an extra request", "(none)",
                                                last_input(request.messages, self.team)))
                reply = ModelReply([{"type": "text", "text": END_OF_RECORDING}])
            else:
                call = self.calls[index]
                recorded, team = call["request"], str(call.get("team", ""))
                now = request_data(request, self.name)
                found = first_difference(recorded, team, now, self.team)
                if found is None:
                    self.matched += 1
                else:
                    self._diverge(index, found)
                reply = msgspec.convert(
                    translate_reply(call["reply"], recorded, team, now, self.team), ModelReply)
            self._write()
        if request.on_text is not None and reply.text():
            request.on_text(reply.text())
        return reply

    def upcoming(self) -> tuple[dict[str, Any], str] | None:
        """The recorded request the next call stands for, and its team; None past the end
        or once this member diverged (more than timing): there is nothing left to steer by."""
        with self._lock:
            if self.made >= len(self.calls) or (self.divergence is not None
                                                and not self.divergence.timing):
                return None
            call = self.calls[self.made]
            return call["request"], str(call.get("team", ""))

    def _diverge(self, index: int, found: Difference) -> None:
        if self.divergence is None:
            self.divergence, self.diverged_at = found, index + 1

    def _write(self) -> None:
        write_bytes_atomic(self.out, json.dumps({
            "member": self.member, "recorded": len(self.calls), "made": self.made,
            "matched": self.matched, "request": self.diverged_at,
            "divergence": msgspec.to_builtins(self.divergence) if self.divergence else None
        }).encode())


class NoProvider:
    """In a replay, a model that no recording stands for (a subagent's): it never calls out."""

    def __init__(self, spec: str) -> None:
        self.name = spec

    def complete(self, request: ModelRequest) -> ModelReply:
        return ModelReply([{"type": "text", "text": f"(a replay does not call {self.name})"}])


def wrap(model: Model, team: str, member: str) -> Model:
    """The member's model as this run wants it: replayed, recorded, or as it is."""
    replay = settings.replay_dir()
    if replay:
        out = Path(settings.replay_out() or replay)
        return ReplayModel(member, team, recording_path(replay, member), out / f"{member}.json")
    record = settings.record_dir()
    if record:
        return RecordingModel(model, recording_path(record, member), team)
    return model
