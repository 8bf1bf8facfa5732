"""A member's mailbox on Redis: one stream per member, and how far the member has read.

Keys: `swarm:<team>:inbox:<name>` (the stream; field `m` = the message JSON), `...:acked:<name>`
(the entry id up to which every message is read) and `...:read:<name>` (a set of entry ids read
out of order above it, e.g. a permission answer taken before older mail). Unread = after the
acknowledged position and not in the set. Marking read adds to the set and moves the position
over the read run, in one script; read entries stay in the stream as history (what `report`
shows) until they are older than HISTORY_AGE or more than HISTORY_KEPT, and only entries at or
below the position are ever trimmed. A send is one XADD (plus a change-feed entry) in one
transaction: its cost does not depend on how many messages wait unread.
"""

from __future__ import annotations

import builtins
import time
from collections.abc import Iterable
from typing import Any

from swarm.core.records import base as records
from swarm.core.records.protocol import Message
from swarm.core.store.api import Mailbox, Watcher, superseded
from swarm.core.store.disk import warn
from swarm.core.store.redis.connection import EVENTS_KEPT, RedisConnection
from swarm.core.store.redis.watch import RedisWatcher

HISTORY_AGE_S = 7 * 24 * 3600  # read messages kept this long for reports...
HISTORY_KEPT = 10_000  # ...and at most this many per mailbox

# Ids are "ms-seq": compare numerically, part by part.
_LUA_GT = """
local function gt(a, b)
  local am, as = string.match(a, '(%d+)-(%d+)')
  local bm, bs = string.match(b, '(%d+)-(%d+)')
  am, as, bm, bs = tonumber(am), tonumber(as), tonumber(bm), tonumber(bs)
  return am > bm or (am == bm and as > bs)
end
"""

# KEYS: stream, acked, read set. Returns {acked, entries after it, the read set}.
_UNREAD = """
local acked = redis.call('GET', KEYS[2]) or '0-0'
return {acked, redis.call('XRANGE', KEYS[1], '(' .. acked, '+'), redis.call('SMEMBERS', KEYS[3])}
"""

# KEYS: stream, acked, read set, the team's change feed. ARGV: now_ms, history age ms, history
# kept, n wanted, this member's name, the feed's length, ids... (the first n ids were asked for;
# the rest are superseded idle notes). Returns how many of the wanted ones were newly marked;
# when any was, a `read` entry on the feed (what `swarm send --wait-read` waits on), in the
# same request.
_MARK = _LUA_GT + """
local acked = redis.call('GET', KEYS[2]) or '0-0'
local marked = 0
for i = 7, #ARGV do
  if gt(ARGV[i], acked) then
    local added = redis.call('SADD', KEYS[3], ARGV[i])
    if i - 6 <= tonumber(ARGV[4]) then marked = marked + added end
  end
end
local moving = true
while moving do
  local batch = redis.call('XRANGE', KEYS[1], '(' .. acked, '+', 'COUNT', 128)
  if #batch == 0 then break end
  for _, entry in ipairs(batch) do
    if redis.call('SREM', KEYS[3], entry[1]) == 1 then acked = entry[1]
    else moving = false; break end
  end
end
redis.call('SET', KEYS[2], acked)
local cut = tostring(tonumber(ARGV[1]) - tonumber(ARGV[2])) .. '-0'
if gt(cut, acked) then cut = acked end
local kept = tonumber(ARGV[3])
local length = redis.call('XLEN', KEYS[1])
if length > kept + kept / 10 then
  local old = redis.call('XRANGE', KEYS[1], '-', acked, 'COUNT', length - kept)
  if #old > 0 and gt(old[#old][1], cut) then cut = old[#old][1] end
end
if cut ~= '0-0' then redis.call('XTRIM', KEYS[1], 'MINID', cut) end
if marked > 0 then
  redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[6], '*', 'kind', 'read', 'name', ARGV[5])
end
return marked
"""


class RedisMailbox(Mailbox):
    """One member's mailbox: a stream, and how far the member has read."""

    def __init__(self, connection: RedisConnection, team: str, name: str) -> None:
        super().__init__(team, name)
        self.connection = connection
        self.stream = connection.key(team, "inbox", name)
        self.acked = connection.key(team, "acked", name)
        self.read_set = connection.key(team, "read", name)
        self._entry_of: dict[str, str] = {}  # message id -> stream entry id, as last read
        self._last_unread: builtins.list[tuple[str, Message]] = []  # the last read's view
        self._unread_script = connection.script(_UNREAD)
        self._mark_script = connection.script(_MARK)

    # -- reading -----------------------------------------------------------------------------
    def _parse(self, entries: Iterable[Any], read: set[str], acked: str | None
               ) -> builtins.list[tuple[str, Message]]:
        out, bad = [], []
        for raw_id, raw_fields in entries:
            entry = raw_id.decode()
            # From a script the fields come as a flat list; from redis-py's XRANGE, a dict.
            fields = (raw_fields if isinstance(raw_fields, dict)
                      else dict(zip(raw_fields[::2], raw_fields[1::2], strict=True)))
            try:
                message = records.decode(fields.get(b"m", b""), Message)
            except (records.DecodeError, ValueError):
                bad.append((entry, fields.get(b"m", b"")))
                continue
            done = entry in read or (acked is not None and not _after(entry, acked))
            if done != message.read:
                message = records.replace(message, read=done)
            self._entry_of[message.id] = entry
            out.append((entry, message))
        if bad:
            self._quarantine(bad)
        return out

    def _quarantine(self, bad: builtins.list[tuple[str, bytes]]) -> None:
        """Copy unreadable entries to `...:corrupt:<name>` and mark them read: one bad entry
        is set aside alone; the others stay deliverable."""
        aside = self.connection.key(self.team, "corrupt", self.name)

        def move() -> None:
            pipe = self.connection.client.pipeline()
            for _entry, data in bad:
                pipe.rpush(aside, data)
            pipe.execute()
            self._mark_script(keys=[self.stream, self.acked, self.read_set,
                                    self.connection.key(self.team, "events")],
                              args=[_now_ms(), HISTORY_AGE_S * 1000, HISTORY_KEPT, 0, self.name,
                                    EVENTS_KEPT, *[e for e, _ in bad]])

        self.connection.run(move)
        warn(f"{self.stream}: {len(bad)} unreadable entr(y/ies) moved aside to {aside}; "
             "the other messages stay deliverable")

    def _unread_entries(self) -> builtins.list[tuple[str, Message]]:
        reply = self.connection.run(lambda: self._unread_script(
            keys=[self.stream, self.acked, self.read_set]))
        acked, entries, read = reply
        self._last_unread = self._parse(entries, {r.decode() for r in read}, acked.decode())
        return self._last_unread

    def _load(self) -> builtins.list[Message]:
        view = [m for _, m in self._unread_entries()]
        for index in superseded(view):
            view[index] = records.replace(view[index], read=True)
        return view

    def messages(self, unread_only: bool = False,
                 include_archive: bool = False) -> builtins.list[Message]:
        if not include_archive:
            live = self._load()
            return [m for m in live if not m.read] if unread_only else live

        def everything() -> Any:
            pipe = self.connection.client.pipeline()
            pipe.get(self.acked)
            pipe.xrange(self.stream)
            pipe.smembers(self.read_set)
            return pipe.execute()

        acked, entries, read = self.connection.run(everything)
        view = [m for _, m in self._parse(entries, {r.decode() for r in read},
                                          (acked or b"0-0").decode())]
        for index in superseded(view):
            view[index] = records.replace(view[index], read=True)
        return [m for m in view if not m.read] if unread_only else view

    def archived(self) -> builtins.list[Message]:
        """The history: messages at or below the acknowledged position (read out of order
        above it, they are still live, as a read message is until the file store compacts)."""
        def history() -> Any:
            pipe = self.connection.client.pipeline()
            pipe.get(self.acked)
            pipe.xrange(self.stream)
            return pipe.execute()

        acked_raw, entries = self.connection.run(history)
        acked = (acked_raw or b"0-0").decode()
        return [m for e, m in self._parse(entries, set(), acked) if not _after(e, acked)]

    def watcher(self) -> Watcher:
        return RedisWatcher(self.connection, self.team, [self.name], False, [])

    def wait(self, timeout: float | None = None) -> builtins.list[Message]:
        with self.watcher() as watcher:
            return self.wait_with(watcher, timeout)

    # -- writing -----------------------------------------------------------------------------
    def deliver(self, messages: builtins.list[Message], timeout: float | None = None) -> None:
        """All of `messages` in one MULTI/EXEC: they land together or not at all."""
        self.delivered = []
        if not messages:
            return

        def send() -> None:
            pipe = self.connection.client.pipeline(transaction=True)
            for message in messages:
                pipe.xadd(self.stream, {"m": records.encode(message)})
            self.connection.event(pipe, self.team, "inbox", self.name)
            pipe.execute()

        self.connection.run(send)
        self.delivered = [m.id for m in messages]

    def mark_read(self, ids: Iterable[str], compact: bool = True) -> int:
        wanted = set(ids)
        if not wanted:
            return 0
        # Ids from this handle's last read: its view is enough (one request, not two). An idle
        # note it saw superseded stays superseded; one newer than it waits for the next read.
        known = wanted <= self._entry_of.keys() and self._last_unread
        unread = self._last_unread if known else self._unread_entries()
        view = [m for _, m in unread]
        older_idle = [unread[i][0] for i in superseded(view)]
        entries = [self._entry_of[i] for i in wanted if i in self._entry_of]
        if not entries and not older_idle:
            return 0
        # A `read` entry on the change feed comes with it (the file store's watcher sees the
        # mailbox file rewritten instead): only watchers that ask for a member's reads wake on
        # it, never the member's own or the lead's.
        return int(self.connection.run(lambda: self._mark_script(
            keys=[self.stream, self.acked, self.read_set, self.connection.key(self.team, "events")],
            args=[_now_ms(), HISTORY_AGE_S * 1000, HISTORY_KEPT, len(entries), self.name,
                  EVENTS_KEPT, *entries, *older_idle])))

    def compact(self) -> int:
        """Nothing to move: read history is trimmed as the position moves (`mark_read`)."""
        return 0


def _after(entry: str, acked: str) -> bool:
    a_ms, _, a_seq = entry.partition("-")
    b_ms, _, b_seq = acked.partition("-")
    return (int(a_ms), int(a_seq or 0)) > (int(b_ms), int(b_seq or 0))


def _now_ms() -> int:
    return int(time.time() * 1000)

