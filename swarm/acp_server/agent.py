"""The ACP agent's methods (the SDK's `acp.Agent`): initialize, session/new, session/load,
session/prompt, session/cancel, the session's mode and config options. The SDK runs each
incoming message as its own asyncio task; the team's blocking work (building a lead, a prompt's
turns, shutting a team down) runs in worker threads."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import acp
import msgspec
from acp import RequestError
from acp.helpers import update_current_mode
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    CloseSessionResponse,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionCapabilities,
    SessionCloseCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)

import swarm
from swarm.errors import BadInputError, SwarmError, describe_error
from swarm.lead.options import LeadOptions

from . import settings
from .link import EditorLink, in_own_thread
from .stdio import ProtocolPipes
from .team_session import TeamSession

if TYPE_CHECKING:
    from acp.interfaces import Agent

log = logging.getLogger(__name__)
T = TypeVar("T")


class SwarmAgent:
    """`swarm acp`: each session a team led by an LLM lead, with the CLI's options as its
    defaults (`base`: the lead's options but the prompt, cwd, team and resume)."""

    def __init__(self, base: LeadOptions) -> None:
        self.base = base
        self.client: Client | None = None
        self.sessions: dict[str, TeamSession] = {}

    def on_connect(self, conn: Client) -> None:
        self.client = conn

    async def initialize(self, protocol_version: int, client_capabilities: Any = None,
                         client_info: Any = None, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=min(protocol_version, acp.PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(embedded_context=True),
                mcp_capabilities=McpCapabilities(http=False, sse=False),
                session_capabilities=SessionCapabilities(close=SessionCloseCapabilities())),
            auth_methods=[],
            agent_info=Implementation(name="swarm", title="swarm (a team of agents)",
                                      version=swarm.__version__))

    async def new_session(self, cwd: str, additional_directories: list[str] | None = None,
                          mcp_servers: list[Any] | None = None,
                          **kwargs: Any) -> NewSessionResponse:
        session = await self._open(cwd, None, mcp_servers or [])
        return NewSessionResponse(session_id=session.id, modes=settings.modes(session.lead),
                                  config_options=settings.config_options(session.lead))

    async def load_session(self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None,
                           additional_directories: list[str] | None = None,
                           **kwargs: Any) -> LoadSessionResponse:
        session = (self.sessions.get(session_id)
                   or await self._open(cwd, session_id, mcp_servers or []))
        session.link.replay()
        await session.link.flush()  # the whole history before the answer
        return LoadSessionResponse(modes=settings.modes(session.lead),
                                   config_options=settings.config_options(session.lead))

    async def _open(self, cwd: str, team: str | None, mcp_servers: list[Any]) -> TeamSession:
        if not os.path.isabs(cwd):
            raise RequestError.invalid_params({"cwd": f"not an absolute path: {cwd}"})
        options = msgspec.structs.replace(self.base, cwd=cwd, team=team, resume=team is not None)
        loop = asyncio.get_running_loop()

        def link_for(session_id: str, history: Path) -> EditorLink:
            assert self.client is not None
            return EditorLink(loop, self.client, session_id, history)

        def build() -> TeamSession:
            return TeamSession(options, lambda sid, history: _on_loop(
                loop, lambda: link_for(sid, history)), mcp_servers)

        session = await _in_thread(build)
        self.sessions[session.id] = session
        return session

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        session = self._session(session_id)
        text = "\n".join(_text_of(block) for block in prompt).strip()
        if not text:
            raise RequestError.invalid_params({"prompt": "no text in the prompt"})
        stop = await _in_thread(lambda: session.run_prompt(text))
        await session.link.flush()
        return PromptResponse(stop_reason=stop)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            await in_own_thread(session.cancel)

    async def set_session_mode(self, session_id: str, mode_id: str,
                               **kwargs: Any) -> SetSessionModeResponse:
        session = self._session(session_id)
        await _in_thread(lambda: settings.set_mode(session.lead, mode_id))
        session.link.send(update_current_mode(mode_id))
        return SetSessionModeResponse()

    async def set_config_option(self, config_id: str, session_id: str, value: str | bool,
                                **kwargs: Any) -> SetSessionConfigOptionResponse:
        session = self._session(session_id)
        await _in_thread(lambda: settings.set_option(session.lead, config_id, value))
        return SetSessionConfigOptionResponse(
            config_options=settings.config_options(session.lead))

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        """The editor closed the thread: its teammates shut down, the team kept for a load."""
        session = self._session(session_id)
        del self.sessions[session_id]
        session.link.close()
        await in_own_thread(session.end)
        return CloseSessionResponse()

    def _session(self, session_id: str) -> TeamSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.resource_not_found(session_id)
        return session

    async def end_all(self) -> None:
        """The editor went away: every session's teammates shut down, the teams kept."""
        for session in list(self.sessions.values()):
            session.link.close()
            await in_own_thread(session.end)


async def _in_thread(work: Callable[[], T]) -> T:
    """Blocking team work; swarm's own errors become one-line JSON-RPC errors."""
    try:
        return await in_own_thread(work)
    except BadInputError as exc:  # the person's to fix: the line as the CLI says it
        raise RequestError.invalid_params({"message": str(exc)}) from None
    except SwarmError as exc:
        raise RequestError.internal_error({"message": describe_error(exc)}) from None


def _on_loop(loop: asyncio.AbstractEventLoop, make: Callable[[], T]) -> T:
    """Make something that belongs to the loop (its queue, its task) from a worker thread."""
    async def made() -> T:
        return make()
    return asyncio.run_coroutine_threadsafe(made(), loop).result()


def _text_of(block: Any) -> str:
    text = getattr(block, "text", None)
    if isinstance(text, str):
        return text
    resource = getattr(block, "resource", None)
    inner = getattr(resource, "text", None)
    if isinstance(inner, str):  # embedded context: a file the person attached
        uri = getattr(resource, "uri", "")
        return f"<file uri=\"{uri}\">\n{inner}\n</file>"
    return ""


async def serve(base: LeadOptions, pipes: ProtocolPipes) -> None:
    """Answer the editor over the protocol's pipes until it closes them (or SIGTERM, SIGINT,
    SIGHUP); then every session's teammates shut down and the teams are kept."""
    agent = SwarmAgent(base)
    writer, reader = await pipes.streams()
    loop = asyncio.get_running_loop()
    # The SDK answers "method not found" for what SwarmAgent lacks (authenticate, list, fork...);
    # session/close is in its unstable set.
    listening = loop.create_task(acp.run_agent(cast("Agent", agent), writer, reader,
                                               use_unstable_protocol=True))
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        loop.add_signal_handler(signum, listening.cancel)
    try:
        await listening
    except asyncio.CancelledError:
        log.info("swarm acp: stopped by a signal")
    finally:
        await agent.end_all()
