"""The team: its file (`config.json`), its members, and the entry points to mailboxes and tasks."""

from __future__ import annotations

import builtins
import functools
from collections.abc import Callable

from swarm import settings
from swarm.core.records.names import (
    LEAD_NAME,
    agent_id,
    validate_agent_name,
    validate_color,
    validate_team_name,
)
from swarm.core.records.protocol import (
    LEAD_ONLY_TYPES,
    MAX_MESSAGE_BYTES,
    MAX_SUMMARY_BYTES,
    Message,
    ShutdownResponse,
    StructuredMessage,
    check_size,
    dump_structured,
    sender_may_send,
    structured_object,
    validate_structured,
)
from swarm.core.records.team_config import PALETTE, Member, TeamConfig
from swarm.core.store import paths
from swarm.core.store import select as stores
from swarm.core.store.api import DocumentMissing, Mailbox, TaskList
from swarm.core.store.disk import ensure_dir
from swarm.core.store.liveness import terminate
from swarm.core.team import lead_key
from swarm.core.team.gone import gone_error, processes, state_names
from swarm.core.team.state import member_process, read_state
from swarm.errors import (
    BadInputError,
    MessageTooLargeError,
    OperationFailedError,
    ProtocolError,
    TeamBusyError,
    TeamGoneError,
    UnknownRecipientError,
)


def _check_utf8(what: str, text: str | None) -> None:
    """Text that cannot be written as UTF-8 (lone surrogates: bytes that were not UTF-8, read
    with surrogateescape from argv or stdin) is a bad input, not a crash mid-send."""
    if text is None:
        return
    try:
        text.encode()
    except UnicodeEncodeError as exc:
        raise BadInputError(f"the {what} is not UTF-8 text (character {exc.start} cannot be "
                            "encoded); nothing was sent") from None


def _summary_of(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= 60 else line[:57] + "..."


def _end_processes(team: Team, members: builtins.list[Member]) -> None:
    for member in members:
        found = member_process(team.name, member)
        if found:
            terminate(*found)
        team.tasks.release_owned_by(member.name)


class Team:
    """A handle on one team: its document, members, mailboxes and tasks, wherever the selected
    store (`swarm.core.store.select`) keeps them. Cheap: every call reads what it needs."""

    # Set by `salvage` when the document is gone: the team as its state records show it.
    _stand_in: TeamConfig | None = None
    _gone: TeamGoneError | None = None

    def __init__(self, name: str) -> None:
        self.name = name
        self.doc = stores.team_store().team_document(name)
        self.dir = self.doc.dir

    @functools.cached_property
    def tasks(self) -> TaskList:
        return stores.team_store().tasks(self.name, check_owner=self._check_member)

    def __repr__(self) -> str:
        return f"Team({self.name!r})"

    # -- lifecycle ---------------------------------------------------------------------------
    @classmethod
    def create(cls, name: str, description: str = "") -> Team:
        """Create a team; on a name clash the team gets a unique `NAME-xxxx` (see `team.name`)."""
        managed = settings.policy_dir()  # the person's, now: a member never reads its own
        # The lead's key before the team file: no team is seen without its key.
        team = cls(stores.team_store().create_team(validate_team_name(name), description,
                                                   before=lead_key.create_key))
        if managed:
            team.update(lambda config: setattr(config, "policy_dir", managed))
        return team

    @classmethod
    def open(cls, name: str) -> Team:
        team = cls(validate_team_name(name))
        team.config()
        return team

    @classmethod
    def salvage(cls, name: str) -> Team:
        """The team, to stop its agents: itself while its document reads; when the document is
        gone (TeamGoneError), a read-only stand-in built from the members' state records (name
        and pid), so `team delete --force`, `kill` and `doctor --fix` still end its agents."""
        team = cls(validate_team_name(name))
        try:
            team.config()
        except TeamGoneError as exc:
            lead = Member(agent_id=agent_id(LEAD_NAME, team.name), name=LEAD_NAME,
                          agent_type="team-lead")
            # Only a state with a process start time: a bare pid may be anyone's by now; and
            # the team's agent processes found running here (their records may be gone too).
            found = [Member(agent_id=agent_id(n, team.name), name=n, pid=state.pid)
                     for n in state_names(team.name) if n != LEAD_NAME
                     and (state := read_state(team.name, n)) and state.started_at]
            known = {m.name for m in found}
            found += [Member(agent_id=agent_id(n, team.name), name=n, pid=pid)
                      for n, pid in processes(team.name).items()
                      if n != LEAD_NAME and n not in known]
            team._stand_in = TeamConfig(name=team.name, lead_agent_id=lead.agent_id,
                                        members=[lead, *found])
            team._gone = exc
        return team

    def _refuse_stand_in(self) -> None:
        if self._gone is not None:  # never write a stand-in back as if it were the document
            raise self._gone

    @classmethod
    def list(cls) -> builtins.list[Team]:
        return [cls(name) for name in stores.team_store().team_names()]

    @classmethod
    def delete(
        cls,
        name: str,
        force: bool = False,
        stop: Callable[[Team, builtins.list[Member]], None] | None = None,
    ) -> builtins.list[str]:
        """Remove the team directory. Refuses while a member process lives, unless `force`.
        First `stop` ends the members' processes; the default ends each live one (SIGTERM, then
        SIGKILL) and gives back its tasks. Worktrees with work in them are moved out of the team
        directory first (`swarm.core.team.worktrees.leave_team`), never deleted.
        `swarm.ops.member.control.delete_team` (what the CLI runs) also closes the team's panes.
        Returns the members that were alive."""
        team = cls.salvage(name) if force else cls.open(name)
        alive = team.live_members()
        if alive and not force:
            names = ", ".join(m.name for m in alive)
            raise TeamBusyError(
                f"team {team.name!r} still has running members ({names}); shut them down with "
                f"`swarm shutdown --all --team {team.name}` or use --force"
            )
        (stop or _end_processes)(team, alive)
        # Work in a member's worktree outlives its team (a no-op when `stop` did this already).
        from swarm.core.team.worktrees import leave_team  # git helpers: not for every command

        leave_team(team)
        team._remove()
        return [m.name for m in alive]

    def _remove(self) -> None:
        self.doc.remove()

    def exists(self) -> bool:
        return self.doc.exists()

    def document(self) -> str:
        """Where the team file is, for messages: its path (its key on Redis)."""
        return self.doc.location()

    def config_key(self) -> object:
        """Changes whenever the team file does (cheap), for caches of what it says."""
        return self.doc.version()

    # -- the team file -----------------------------------------------------------------------
    def config(self) -> TeamConfig:
        if self._stand_in is not None:
            return self._stand_in
        try:
            return self.doc.read()
        except DocumentMissing:
            raise gone_error(self.name, self.document()) from None

    def update(self, change: Callable[[TeamConfig], None]) -> TeamConfig:
        """Read-modify-write the team file under its lock."""
        self._refuse_stand_in()
        try:
            return self.doc.update(change)
        except DocumentMissing:
            raise gone_error(self.name, self.document()) from None

    def members(self) -> builtins.list[Member]:
        return self.config().members

    def member(self, name: str) -> Member:
        found = self.config().member(name.lower())
        if found is None:
            raise UnknownRecipientError(
                f"{name!r} is not a member of team {self.name!r}; see `swarm team show {self.name}`"
            )
        return found

    def _check_member(self, name: str) -> str:
        return self.member(name).name

    def live_members(self) -> builtins.list[Member]:
        out = []
        for member in self.members():
            if member.name != LEAD_NAME and member_process(self.name, member):
                out.append(member)
        return out

    def add_member(self, name: str, **fields: object) -> Member:
        """Register a member (it does not start it: `swarm spawn` does)."""
        clean = validate_agent_name(name)
        if fields.get("color") is None:
            fields["color"] = PALETTE[(len(self.members()) - 1) % len(PALETTE)]
        fields["color"] = validate_color(fields["color"])  # it reaches tmux, ANSI and HTML
        member = Member(agent_id=agent_id(clean, self.name), name=clean, **fields)  # type: ignore[arg-type]

        def add(config: TeamConfig) -> None:
            if config.member(clean) is not None:
                raise BadInputError(f"{clean!r} is already a member of team {self.name!r}")
            config.members.append(member)

        self.update(add)
        ensure_dir(paths.agent_dir(self.name, clean))
        return member

    def update_member(self, name: str, **fields: object) -> Member:
        def change(config: TeamConfig) -> None:
            member = config.member(name)
            if member is None:
                raise UnknownRecipientError(f"{name!r} is not a member of team {self.name!r}")
            for key, value in fields.items():
                setattr(member, key, value)

        return self.update(change).member(name)  # type: ignore[return-value]

    def remove_member(self, name: str) -> None:
        if name == LEAD_NAME:
            raise BadInputError("the team lead cannot be removed")

        def remove(config: TeamConfig) -> None:
            if config.member(name) is None:
                raise UnknownRecipientError(f"{name!r} is not a member of team {self.name!r}")
            config.members = [m for m in config.members if m.name != name]

        self.update(remove)

    # -- messages ----------------------------------------------------------------------------
    def inbox(self, name: str = LEAD_NAME, checked: bool = True) -> Mailbox:
        """A member's mailbox. `checked=False`: the name is not looked up in the team document
        (the caller has the member already, or the document is what broke)."""
        return stores.team_store().mailbox(self.name, self._check_member(name) if checked
                                           else name)

    def send(
        self,
        to: str,
        text: str | dict[str, object] | StructuredMessage,
        sender: str = LEAD_NAME,
        summary: str | None = None,
    ) -> builtins.list[str]:
        """Deliver a message to one member or to every member but the sender (`*`).

        Returns the new message ids. Raises before anything is written when the recipient is
        unknown, the message is too large, or a structured message is broadcast or misaddressed.
        """
        return self.doc.sending(lambda: self._send_once(to, text, sender, summary))

    def _send_once(self, to: str, text: str | dict[str, object] | StructuredMessage,
                   sender: str, summary: str | None) -> builtins.list[str]:
        if isinstance(text, dict | str):
            raw = structured_object(text)
            structured: StructuredMessage | None = (
                None if raw is None else validate_structured(raw))
        else:
            structured = text
        body = dump_structured(structured) if structured is not None else str(text)
        if structured is None and not body.strip():
            raise BadInputError("the message is empty: there is nothing to send")
        _check_utf8("message", body)
        _check_utf8("summary", summary)
        if len(body) * 4 > MAX_MESSAGE_BYTES and len(body.encode()) > MAX_MESSAGE_BYTES:
            raise MessageTooLargeError(
                f"message is {len(body.encode())} bytes; the limit is {MAX_MESSAGE_BYTES} bytes"
                " (put large content in a file and send its path)"
            )
        try:
            config = self.doc.config_for_send(self._stand_in)
        except DocumentMissing:
            raise gone_error(self.name, self.document()) from None
        author = config.member(sender.lower())
        if author is None:
            raise UnknownRecipientError(f"sender {sender!r} is not a member of team {self.name!r}")
        if to == "*":
            if structured is not None:
                raise ProtocolError("structured messages cannot be broadcast; send to one member")
            recipients = [m.name for m in config.members if m.name != author.name]
            if not recipients:
                raise OperationFailedError(
                    f"team {self.name!r} has no members but {author.name}: nobody to send to"
                    " (`swarm spawn NAME` starts one)")
        else:
            target = config.member(to.lower())
            if target is None:
                raise UnknownRecipientError(
                    f"{to!r} is not a member of team {self.name!r}; see `swarm team show {self.name}`"
                )
            if isinstance(structured, ShutdownResponse) and target.name != LEAD_NAME:
                raise ProtocolError("shutdown_response can only be sent to team-lead")
            recipients = [target.name]
        if structured is not None and not sender_may_send(structured, author.name):
            raise ProtocolError(
                f"{author.name} may not send {structured.type}: only {LEAD_NAME} sends it"
                if structured.type in LEAD_ONLY_TYPES
                else f"a {structured.type} must come from the member it names")
        if structured is None and summary is None:
            summary = _summary_of(body)
        check_size("summary", summary, MAX_SUMMARY_BYTES)
        # Only the lead sends an order; it is signed for its recipient (core.team.lead_key). The
        # callers decide who speaks: the CLI never names the lead under a teammate.
        signed = lead_key.is_order(structured)
        messages = []
        for name in recipients:
            message = Message(sender=author.name, text=body, summary=summary, color=author.color)
            if signed:
                message.sig = lead_key.sign(self.name, name, message)
            messages.append(message)
        return self.doc.deliver(recipients, messages)
