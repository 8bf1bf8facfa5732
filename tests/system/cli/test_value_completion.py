"""Shell completion of values: `--model` (names and `PROVIDER:` prefixes),
`--backend`, modes, `permissions approve|deny <TAB>` (the pending requests' ids, each as a
unique prefix, and the members asking) and `'*'` for `send`; through the real executable, as
Click's scripts ask it, with plain JSON reads only (no model, no SDK imported by a Tab)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from swarm.core.records.names import LEAD_NAME
from swarm.core.records.protocol import Message, PermissionRequest, dump_structured
from swarm.core.team.team import Team
from tests.unit.cli.test_helptext import complete
from tests.unit.test_startup import PROBE, ROOT, SDKS

MODELS = ["sonnet", "opus", "haiku", "shell", "scripted:", "anthropic:", "bedrock:", "vertex:",
          "openai:", "ollama:"]
BACKENDS = ["auto", "tmux", "iterm2", "hidden", "ssh:"]
MODES = ["default", "acceptEdits", "plan", "auto", "bypassPermissions"]


def test_model_names_and_provider_prefixes(team: Team) -> None:
    assert complete("swarm spawn w --model ") == MODELS
    assert complete("swarm spawn w --model ol") == ["ollama:"]
    assert complete("swarm spawn w -m s") == ["sonnet", "shell", "scripted:"]
    assert complete("swarm respawn alice --team alpha --model h") == ["haiku"]
    assert complete("swarm lead --model b") == ["bedrock:"]
    assert complete("swarm lead --teammate-model ") == ["inherit", *MODELS]


def test_backends_and_modes(team: Team) -> None:
    assert complete("swarm spawn w --backend ") == BACKENDS
    assert complete("swarm spawn w --backend s") == ["ssh:"]
    assert complete("swarm lead --backend h") == ["hidden"]
    assert complete("swarm spawn w --permission-mode ") == MODES
    assert complete("swarm mode --team alpha alice ") == MODES


def ask(team: Team, sender: str, request_id: str, read: bool = False,
        agent_id: str | None = None) -> None:
    request = PermissionRequest(request_id=request_id, agent_id=agent_id or f"{sender}@alpha",
                                tool_name="Bash", description="d", input={"command": "ls"})
    box = team.inbox(LEAD_NAME, checked=False)
    message = Message(sender=sender, text=dump_structured(request))
    box.deliver([message])
    if read:  # answered
        box.mark_read([message.id])


def test_approve_offers_pending_request_ids_and_the_members_asking(team: Team) -> None:
    ask(team, "alice", "3f2a9c1d-0000-4000-8000-000000000001")
    ask(team, "alice", "3f2a9c1d-0000-4000-8000-000000000002")  # the same first 8: longer
    ask(team, "bob", "77aa00bb-0000-4000-8000-000000000003")
    ask(team, "bob", "99cc00dd-0000-4000-8000-000000000004", read=True)  # answered already
    ask(team, "bob", "55ee00ff-0000-4000-8000-000000000005", agent_id="alice@alpha")  # forged
    ask(team, "bob", "$(touch pwned)")  # a Tab would type it into the person's command line
    ids = ["3f2a9c1d-0000-4000-8000-0000000000" + n for n in ("01", "02")]
    offered = complete("swarm permissions approve --team alpha ")
    # alice asks twice, so her name would be ambiguous: only bob's name is offered.
    assert offered == [*ids, "77aa00bb", "bob"], offered
    assert complete("swarm permissions approve --team alpha 7") == ["77aa00bb"]
    assert complete("swarm permissions deny --team alpha b") == ["bob"]
    # The same, from $SWARM_TEAM; nothing at all for a team with no mailbox.
    assert complete("swarm permissions approve 3", env={"SWARM_TEAM": "alpha"}) == ids
    assert complete("swarm permissions approve --team beta ") == []


def test_send_offers_everyone_quoted_for_the_shell(team: Team) -> None:
    assert complete("swarm send --team alpha ") == ["team-lead", "alice", "bob", "'*'"]
    assert complete("swarm send --team alpha a") == ["alice"]
    assert complete("swarm send ") == []  # no team: nobody, not even everyone
    # zsh and fish quote what they insert themselves: the bare `*`.
    # (zsh's COMP_CWORD is the word's index, fish's the word typed so far.)
    for shell, cword in (("zsh", "4"), ("fish", "")):
        proc = subprocess.run([sys.executable, "-m", "swarm"], capture_output=True, text=True,
                              timeout=60, env={**os.environ, "COMP_CWORD": cword,
                                               "COMP_WORDS": "swarm send --team alpha ",
                                               "_SWARM_COMPLETE": f"{shell}_complete"})
        assert proc.returncode == 0, proc.stderr
        words = proc.stdout.replace(",", "\n").replace("\t", "\n").split("\n")
        assert "*" in words, proc.stdout
        assert "'*'" not in proc.stdout


def modules_after(argv: list[str], env: dict[str, str]) -> tuple[set[str], str]:
    """(modules, stdout) of `swarm ARGV` in a fresh interpreter with `env`."""
    proc = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True,
                          timeout=60, cwd=ROOT, env={**os.environ, **env})
    return set(json.loads(proc.stderr.strip().splitlines()[-1])["modules"]), proc.stdout


def test_a_tab_imports_nothing_its_command_does_not(team: Team) -> None:
    """A Tab loads the command (as its --help does) and reads JSON: no model, no SDK more."""
    ask(team, "bob", "77aa00bb-0000-4000-8000-000000000003")
    for words, cword, command in (
            ("swarm spawn w --model ", "4", ["spawn"]),
            ("swarm lead --backend ", "3", ["lead"]),
            ("swarm permissions approve --team alpha ", "5", ["permissions", "approve"]),
            ("swarm send --team alpha ", "4", ["send"])):
        tab, offered = modules_after([], {"COMP_WORDS": words, "COMP_CWORD": cword,
                                          "_SWARM_COMPLETE": "bash_complete"})
        assert offered, words
        helped, _ = modules_after([*command, "--help"], {})
        more = {m for m in tab - helped if m.startswith(
            ("swarm.runtime", "swarm.lead", "swarm.ops", "swarm.backends", "pydantic", *SDKS))}
        assert more == set(), (words, sorted(more))


def test_the_offered_providers_are_the_providers() -> None:
    """The Tab's list (core.records.names, no model imported) is the providers' own."""
    from swarm.core.records.names import MODEL_PROVIDERS
    from swarm.runtime.models.providers import PROVIDERS

    assert tuple(PROVIDERS) == MODEL_PROVIDERS
