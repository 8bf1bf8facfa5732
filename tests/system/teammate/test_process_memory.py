"""A process that holds a secret closes itself to its commands (core.trust.process_memory): it
is non-dumpable (prctl), and the secrets of the environment it was started with are zeroed where
`/proc/PID/environ` shows them and unset for the children it starts without an environment of
their own, while its own `os.environ` keeps them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.helpers import wait_until

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux: /proc, prctl")

CHILD = """
import json, os, subprocess, sys
from swarm.core.trust.process_memory import is_dumpable, make_non_dumpable, scrub_starting_environ
from swarm.core.trust.secrets import is_secret
before = is_dumpable()
made = make_non_dumpable()
scrubbed = scrub_starting_environ(is_secret)
inherited = subprocess.run(["sh", "-c", "echo \\"[$ANTHROPIC_API_KEY]\\""], capture_output=True,
                           text=True).stdout.strip()
print(json.dumps({"before": before, "made": made, "after": is_dumpable(), "scrubbed": scrubbed,
                  "kept": os.environ.get("ANTHROPIC_API_KEY"), "inherited": inherited}),
      flush=True)
sys.stdin.readline()  # until the test has looked at it
"""


def test_a_process_closes_its_memory_and_starting_environment(tmp_path: Path) -> None:
    key = "sk-ant-process-memory-7d1e2f"
    env = {**os.environ, "ANTHROPIC_API_KEY": key, "PLAIN_VALUE": "stays-visible",
           "SWARM_STORE": "redis://:hunter2pass@127.0.0.1:1/0"}
    child = subprocess.Popen([sys.executable, "-c", CHILD], env=env, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdin is not None
        told = json.loads(wait_until(child.stdout.readline, 30))
        assert told["before"] is True and told["made"] is True and told["after"] is False
        assert set(told["scrubbed"]) == {"ANTHROPIC_API_KEY", "SWARM_STORE"}
        assert told["kept"] == key  # the process itself still has what it needs
        assert told["inherited"] == "[]"  # a child without its own environment gets none
        environ = Path(f"/proc/{child.pid}/environ")
        try:
            shown = environ.read_bytes()
        except PermissionError:  # not root: a non-dumpable process's environ cannot be opened
            return
        assert key.encode() not in shown and b"hunter2pass" not in shown
        assert b"ANTHROPIC_API_KEY=\0" in shown and b"PLAIN_VALUE=stays-visible" in shown
    finally:
        if child.stdin is not None:
            child.stdin.close()
        child.wait(30)
