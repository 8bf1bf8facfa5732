"""Start-up is a feature: each command imports what it uses and builds the models it needs.

Here, in-process: every model builds on first use. What a fresh interpreter running the real
`main` (or a real `swarm agent` process) loads: tests/system/cli/test_import_cost.py and
tests/system/cli/test_startup.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

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


def under(modules: set[str], *prefixes: str) -> set[str]:
    return {m for m in modules if m.split(".")[0] in prefixes or m.startswith(prefixes)}


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
