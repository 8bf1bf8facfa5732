"""Where a replayed model request differs from the recorded one, volatile parts aside.

Both sides are normalised before they are compared: the team's name, times and dates (the
system prompt's date line), elapsed seconds, ids (message and tool-use ids, hex, uuids), pids,
temporary paths and the lead's <team-status> snapshot (where each member is at the moment of a
wake) vary from run to run without the run being different. What is left is
compared in order: the system prompt, the tools offered, the number of messages, then each
message's text, tool calls and tool results; the first difference names where it is.
"""

from __future__ import annotations

import json
import re
from typing import Any

from msgspec import Struct

from swarm.core.trust.secrets import redact

SNIPPET = 160  # characters of each side shown around the first differing one

_VOLATILE = (
    # The lead's snapshot of the team at a wake: where each member is at that moment.
    (re.compile(r"<team-status>.*?</team-status>", re.S), "<team-status/>"),
    (re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?"), "<time>"),
    (re.compile(r"\b\d{4}-\d{2}-\d{2}\b"), "<date>"),
    (re.compile(r"\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? \w+ \d{1,2},? \d{4}\b"), "<date>"),
    (re.compile(r"\b\d{1,2}:\d{2}(:\d{2})?\b"), "<time>"),
    (re.compile(r"\b(toolu|msg|call|req)_[A-Za-z0-9]+"), "<id>"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"), "<id>"),
    (re.compile(r"\b(?=[0-9a-f]*\d)[0-9a-f]{8,}\b"), "<id>"),
    (re.compile(r"\b\d+(\.\d+)?\s?(ms|s|sec|secs|seconds?|m|min|minutes?|h)\b"), "<n>s"),
    (re.compile(r"\bpid[ =:]?\d+", re.I), "pid <n>"),
    (re.compile(r"/tmp/[^\s\"'`)<>]*"), "<tmp>"),
)


# Ids a reply may quote from its request (a shutdown request's id, a message id): they differ
# in a replay, so a recorded reply gets the replay's own.
_IDS = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"
                  r"|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b")


class Difference(Struct):
    what: str  # "system prompt", "tools", "number of messages", "message 3 (user) text", ...
    recorded: str
    now: str
    # The lead woke at another moment: which teammates' messages, or which status block
    # (`<team-quiet>` against `<team-status>`), reached that input. Reported, not counted.
    timing: bool = False


# Messages from several teammates that reached one input together: their order is the order
# they arrived in, which a replay does not reproduce (compared sorted).
_TEAMMATE_MESSAGE = re.compile(r"<teammate-message\b.*?</teammate-message>", re.S)


def _sorted_batches(text: str) -> str:
    found = _TEAMMATE_MESSAGE.findall(text)
    if len(found) < 2:
        return text
    ordered = iter(sorted(found))
    return _TEAMMATE_MESSAGE.sub(lambda _: next(ordered), text)


def normalise(text: str, team: str) -> str:
    out = _sorted_batches(redact(text))
    if team:  # as a whole word: team `rec` is not in "directory"
        out = re.sub(rf"(?<![\w-]){re.escape(team)}(?![\w-])", "<team>", out)
    for pattern, placeholder in _VOLATILE:
        out = pattern.sub(placeholder, out)
    return out


def _first_change(a: str, b: str) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
                min(len(a), len(b)))


# What the lead's wake policy adds to an input: the team's snapshot (normalised to
# `<team-status/>`) or the note that the team went quiet.
_WAKE_BLOCK = re.compile(r"<team-quiet>.*?</team-quiet>|<team-status/>", re.S)


def _inside(pattern: re.Pattern[str], text: str, at: int) -> bool:
    return any(m.start() <= at <= m.end() for m in pattern.finditer(text))


def _only_arrivals(text: str) -> bool:
    """A block that holds nothing but teammates' messages and the wake policy's blocks: what
    reached an input because of when the lead woke."""
    rest = _WAKE_BLOCK.sub("", _TEAMMATE_MESSAGE.sub("", text))
    return not rest.strip() and text.strip() != ""


def _in_teammate_message(a: str, b: str) -> bool:
    """The texts first differ inside a teammate's message on both sides: which teammates'
    messages a wake found is timing, an order divergence."""
    at = _first_change(a, b)
    return all(_inside(_TEAMMATE_MESSAGE, text, at) for text in (a, b))


def _in_wake_block(a: str, b: str) -> bool:
    """The texts first differ where the wake policy's blocks stand on both sides (the lead
    woke when the team went quiet in one run, at a status change in the other): timing."""
    at = _first_change(a, b)
    return all(_inside(_WAKE_BLOCK, text, at) for text in (a, b))


def _snippets(a: str, b: str) -> tuple[str, str]:
    """Each side from a little before the first character that differs."""
    at = _first_change(a, b)
    start = max(0, at - 40)
    lead = "…" if start else ""
    return lead + a[start:start + SNIPPET], lead + b[start:start + SNIPPET]


def _block_parts(block: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, text) of what a block says."""
    kind = block.get("type", "")
    if kind == "text":
        return [("text", str(block.get("text", "")))]
    if kind == "tool_use":
        return [(f"tool call {block.get('name')}", json.dumps(block.get("input"), sort_keys=True))]
    if kind == "tool_result":
        content = block.get("content")
        text = content if isinstance(content, str) else json.dumps(content, sort_keys=True)
        return [("tool result", text)]
    return [(kind, json.dumps(block, sort_keys=True))]


def _parts(message: dict[str, Any]) -> list[tuple[str, str]]:
    content = message.get("content")
    if isinstance(content, str):
        return [("text", content)]
    return [p for block in content or [] for p in _block_parts(block)]


def first_difference(recorded: dict[str, Any], recorded_team: str, now: dict[str, Any],
                     now_team: str) -> Difference | None:
    """The first place `now` differs from `recorded` (two requests), or None."""
    def same(label: str, a: str, b: str) -> Difference | None:
        na, nb = normalise(a, recorded_team), normalise(b, now_team)
        if na == nb:
            return None
        timing = True
        if _in_teammate_message(na, nb):
            label += " (order: other teammates' messages reached this input)"
        elif _in_wake_block(na, nb):
            label += " (timing: the lead woke at another moment)"
        else:
            timing = False
        ra, rb = _snippets(na, nb)
        return Difference(label, ra, rb, timing=timing)

    found = same("system prompt", recorded.get("system", ""), now.get("system", ""))
    if found:
        return found
    names = [t.get("name", "") for t in recorded.get("tools", [])]
    now_names = [t.get("name", "") for t in now.get("tools", [])]
    if names != now_names:
        return Difference("tools", ", ".join(names), ", ".join(now_names))
    if recorded.get("effort") != now.get("effort"):  # its thinking configuration
        return Difference("effort", str(recorded.get("effort")), str(now.get("effort")))
    old, new = recorded.get("messages", []), now.get("messages", [])
    for index, (a, b) in enumerate(zip(old, new, strict=False), start=1):
        where = f"message {index} ({b.get('role')})"
        pa, pb = _parts(a), _parts(b)
        for (label, ta), (label_now, tb) in zip(pa, pb, strict=False):
            if label != label_now:
                return Difference(f"{where}: {label_now} where the recording has {label}",
                                  normalise(ta, recorded_team)[:SNIPPET],
                                  normalise(tb, now_team)[:SNIPPET])
            found = same(f"{where} {label}", ta, tb)
            if found:
                return found
        if len(pa) != len(pb):
            extra = pa[len(pb):] or pb[len(pa):]
            woke = b.get("role") == "user" and all(
                label == "text" and _only_arrivals(normalise(text, "")) for label, text in extra)
            return Difference(f"{where}: number of blocks" + (
                " (timing: the lead woke at another moment)" if woke else ""),
                str(len(pa)), str(len(pb)), timing=woke)
    if len(old) != len(new):
        return Difference("number of messages", str(len(old)), str(len(new)))
    return None


def last_input(messages: list[dict[str, Any]], team: str) -> str:
    """What a request adds last (its last message), normalised: to show an extra request."""
    if not messages:
        return "(no messages)"
    text = " ".join(f"[{label}] {value}" for label, value in _parts(messages[-1]))
    return normalise(text, team)[:SNIPPET]


def _ids(request: dict[str, Any]) -> list[str]:
    text = json.dumps([request.get("system"), request.get("messages")])
    return list(dict.fromkeys(_IDS.findall(text)))


def translate_reply(reply: dict[str, Any], recorded: dict[str, Any], recorded_team: str,
                    now: dict[str, Any], now_team: str) -> dict[str, Any]:
    """The recorded reply for this run: an id it quotes from its request becomes the id at the
    same place in this run's request, and the recorded team's name this team's."""
    pairs = {old: new for old, new in zip(_ids(recorded), _ids(now), strict=False) if old != new}
    if not pairs and recorded_team == now_team:
        return reply
    text = json.dumps(reply)
    if pairs:
        text = _IDS.sub(lambda m: pairs.get(m[0], m[0]), text)
    if recorded_team and recorded_team != now_team:
        text = re.sub(rf"(?<![\w-]){re.escape(recorded_team)}(?![\w-])", now_team, text)
    return json.loads(text)  # type: ignore[no-any-return]
