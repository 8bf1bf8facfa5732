"""One session's line to the editor: its `session/update` notifications in order from any
thread, each kept in the session's history file (what `session/load` replays), and its
`session/request_permission` requests."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

from acp.interfaces import Client
from acp.schema import (
    AllowedOutcome,
    PermissionOption,
    SessionNotification,
    ToolCallUpdate,
)

log = logging.getLogger(__name__)
T = TypeVar("T")
HISTORY_NAME = "acp-history.jsonl"  # in the lead's agent directory: what the editor was shown


class EditorLink:
    def __init__(self, loop: asyncio.AbstractEventLoop, client: Client, session_id: str,
                 history: Path) -> None:
        self.loop = loop
        self.client = client
        self.session_id = session_id
        self.history = history
        self.closed = False
        self._keeping = threading.Lock()
        self._outbox: asyncio.Queue[Any] = asyncio.Queue()
        self._sender = loop.create_task(self._send_all())

    # -- updates ---------------------------------------------------------------------------------
    def send(self, update: Any, keep: bool = True, show: bool = True) -> None:
        """From any thread: the update goes out after those sent before it; `keep`: into the
        history too (a replay itself is not kept again); `show` False: the history only (the
        person's own prompt, which the editor shows already)."""
        if self.closed:
            return
        if keep:
            self._keep(update)
        if not show:
            return
        if _running_loop() is self.loop:  # queued now: a flush right after waits for it
            self._outbox.put_nowait(update)
            return
        with contextlib.suppress(RuntimeError):  # the loop is closed: the editor is gone
            self.loop.call_soon_threadsafe(self._outbox.put_nowait, update)

    async def flush(self) -> None:
        """Every update queued so far is written (a prompt's answer comes after its updates)."""
        await self._outbox.join()

    async def _send_all(self) -> None:
        while True:
            update = await self._outbox.get()
            try:
                await self.client.session_update(session_id=self.session_id, update=update)
            except Exception as exc:  # the editor went away or refused one: not the session's end
                log.debug("session/update not sent: %s", exc)
            finally:
                self._outbox.task_done()

    def _keep(self, update: Any) -> None:
        line = json.dumps(update.model_dump(mode="json", by_alias=True, exclude_none=True))
        data = (line + "\n").encode()
        with self._keeping:  # whole lines, never two threads' bytes interleaved
            try:
                fd = os.open(self.history, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                try:
                    while data:
                        data = data[os.write(fd, data):]
                finally:
                    os.close(fd)
            except OSError as exc:
                log.warning("the session's history is not kept: %s", exc)

    def replay(self) -> int:
        """`session/load`: every kept update again, in order; how many."""
        count = 0
        for update in read_history(self.history, self.session_id):
            self.send(update, keep=False)
            count += 1
        return count

    # -- questions ---------------------------------------------------------------------------------
    def ask(self, tool_call: ToolCallUpdate, options: list[PermissionOption]) -> Future[str | None]:
        """From any thread: the chosen option's kind, or None (cancelled, or no answer)."""
        return self.run(self.asked(tool_call, options))

    async def asked(self, tool_call: ToolCallUpdate, options: list[PermissionOption],
                    sent: threading.Event | None = None) -> str | None:
        """`sent`: set as the question goes out (what waits for it may go on)."""
        await self.flush()  # the editor has the tool call it is asked about
        if sent is not None:
            sent.set()  # the request is written before any update queued after this
        answer = await self.client.request_permission(
            session_id=self.session_id, tool_call=tool_call, options=options)
        if not isinstance(answer.outcome, AllowedOutcome):
            return None
        kinds = {o.option_id: o.kind for o in options}
        return kinds.get(answer.outcome.option_id)

    def run(self, coro: Coroutine[Any, Any, Any]) -> Future[Any]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def close(self) -> None:
        self.closed = True
        self._sender.cancel()


async def in_own_thread(work: Callable[[], T]) -> T:
    """Blocking team work in a thread of its own: a prompt's turn lasts minutes, so a pool of
    worker threads would run out with a few sessions working and leave a cancel waiting."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()

    def settle(outcome: Callable[[], None]) -> None:
        if not done.done():  # the request was dropped (the editor went away)
            outcome()

    def run() -> None:
        try:
            result = work()
        except BaseException as exc:  # handed to the awaiting request, re-raised there
            error = exc
            loop.call_soon_threadsafe(settle, lambda: done.set_exception(error))
        else:
            loop.call_soon_threadsafe(settle, lambda: done.set_result(result))

    threading.Thread(target=run, name="acp-work", daemon=True).start()
    return await done


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def read_history(path: Path, session_id: str) -> list[Any]:
    """The kept updates; a line that does not parse (or a type this SDK lacks) is skipped."""
    updates = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    for line in lines:
        try:
            note = SessionNotification.model_validate({"sessionId": session_id,
                                                       "update": json.loads(line)})
        except ValueError:
            continue
        updates.append(note.update)
    return updates
