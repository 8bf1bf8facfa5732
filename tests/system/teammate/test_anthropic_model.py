"""The Anthropic model in a fresh interpreter: the SDK is imported only when the model is used
(the model against the fake Messages API in-process: tests/unit/runtime/models/test_anthropic_model.py)."""

from __future__ import annotations

import subprocess
import sys


def test_sdk_is_imported_only_when_used() -> None:
    code = ("import sys, swarm.runtime.models, swarm.runtime.models.base; "
            "print('anthropic' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
