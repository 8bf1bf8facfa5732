"""Start-up is a feature: each command imports what it uses and builds the models it needs.

A fresh interpreter runs the real `main` (or a real `swarm agent` process) and reports what it
loaded; `python -X importtime` says what the teammate imported before it went idle."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from swarm.core.records.state import AgentState
from swarm.core.store.liveness import process_start_time
from swarm.core.team.state import write_state
from swarm.core.team.team import Team

ROOT = Path(__file__).resolve().parents[2]
SDKS = ("anthropic", "libtmux", "rich", "portalocker", "prompt_toolkit", "mcp", "tree_sitter")

PROBE = """
import json, sys
from swarm.cli.main import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    assert exc.code in (0, None), exc.code
modules = sorted(sys.modules)
def subclasses(c):
    for s in c.__subclasses__():
        yield s
        yield from subclasses(s)
built = []
if "pydantic.main" in sys.modules:
    from pydantic import BaseModel
    built = sorted(s.__name__ for s in subclasses(BaseModel)
                   if s.__module__.startswith("swarm") and s.__pydantic_complete__)
import gc
print(json.dumps({"modules": modules, "built": built, "frozen": gc.get_freeze_count(),
                  "collector_on": gc.isenabled()}), file=sys.stderr)
"""


def probe(*argv: str) -> dict[str, Any]:
    """What `swarm ARGV` left in a fresh interpreter: its modules, the swarm models it built,
    the objects frozen and whether the collector is on."""
    proc = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True,
                          timeout=60, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    found: dict[str, Any] = json.loads(proc.stderr.strip().splitlines()[-1])
    return found


def loaded(*argv: str) -> tuple[set[str], set[str]]:
    """(modules, swarm models built) after `swarm ARGV` in a fresh interpreter."""
    found = probe(*argv)
    return set(found["modules"]), set(found["built"])


def test_a_command_module_imports_with_the_collector_paused_then_frozen(live: Team) -> None:
    found = probe("tasks", "list", "--team", live.name)
    assert found["frozen"] > 1000 and found["collector_on"]  # frozen, and the collector back on


def under(modules: set[str], *prefixes: str) -> set[str]:
    return {m for m in modules if m.split(".")[0] in prefixes or m.startswith(prefixes)}


def test_help_and_version_load_no_command_module_and_no_pydantic() -> None:
    for argv in (["--help"], ["-V"], ["tasks", "--help"]):
        modules, built = loaded(*argv)
        commands = under(modules, "swarm.cli.") - {"swarm.cli.main", "swarm.cli.helptext"}
        # A command module loaded comes with the table a teammate is checked against.
        assert commands <= ({"swarm.cli.tasks", "swarm.cli.common", "swarm.cli.completion",
                             "swarm.cli.authority", "swarm.cli.caller"}
                            if "tasks" in argv else set()), commands
        assert "swarm.runtime.teammate.agent" not in modules and not under(modules, *SDKS)
        if argv != ["tasks", "--help"]:
            assert "pydantic" not in modules and built == set()


@pytest.fixture
def live(team: Team) -> Team:
    """alice is idle in a live process (this test's), as a teammate waiting for work is."""
    me = os.getpid()
    write_state("alpha", "alice", AgentState(state="idle", pid=me, started_at=process_start_time(me)))
    team.tasks.add("one")
    return team


def test_send_loads_the_core_only_and_no_pydantic(live: Team) -> None:
    modules, _ = loaded("send", "alice", "hi", "--team", "alpha")
    assert not under(modules, "swarm.runtime", "swarm.lead", "backends", *SDKS)
    assert under(modules, "swarm.ops") <= {"swarm.ops", "swarm.ops.mail", "swarm.ops.mail.messages"}
    assert "swarm.core.team.worktrees" not in modules and "swarm.core.agents.definitions" not in modules
    # The team file, the message and the recipient's state are msgspec records (core.records).
    assert "msgspec" in modules and not under(modules, "pydantic", "pydantic_core")


def test_status_and_tasks_load_no_runtime_and_no_pydantic(live: Team) -> None:
    for argv in (["status", "--team", "alpha"], ["tasks", "list", "--team", "alpha"],
                 ["team", "list"]):
        modules, _ = loaded(*argv)
        assert not under(modules, "swarm.runtime", "swarm.lead", *SDKS), argv
        assert not under(modules, "pydantic", "pydantic_core"), argv
        assert "psutil" not in modules, argv  # liveness reads /proc (alice's pid is live)


def test_every_model_builds_on_first_use() -> None:
    """A model's validator is built when it first validates (`defer_build`), so a command
    pays only for the models it uses (docs/design/tool-inputs.md)."""
    import importlib
    import pkgutil

    from pydantic import BaseModel

    import swarm

    for info in pkgutil.walk_packages(swarm.__path__, "swarm."):
        if not info.name.endswith("__main__"):  # `python -m swarm` runs the CLI
            importlib.import_module(info.name)

    def subclasses(cls: type) -> list[type]:
        return [s for sub in cls.__subclasses__() for s in (sub, *subclasses(sub))]

    ours = [m for m in subclasses(BaseModel) if m.__module__.startswith("swarm.")]
    assert len(ours) > 20
    eager = [f"{m.__module__}.{m.__qualname__}" for m in ours
             if not m.model_config.get("defer_build")]
    assert eager == []


SDK_PROBE = """
import gc, json, sys
passes = []
gc.callbacks.append(lambda phase, info: phase == "start" and passes.append(info["generation"]))
from swarm.runtime.models.anthropic_model import AnthropicModel
before = len(passes)
AnthropicModel("sonnet")  # imports the SDK and builds a client; no request
print(json.dumps({"passes": len(passes) - before, "frozen": gc.get_freeze_count(),
                  "enabled": gc.isenabled(), "sdk": "anthropic" in sys.modules}))
"""


