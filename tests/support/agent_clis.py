"""The real agent CLIs (Claude Code, Codex, Gemini CLI) for tests: installed from npm once into a
cache shared by every test run and worker, pinned, never from the developer's own PATH.

`cli_path("claude")` installs on first use (under a file lock, so parallel xdist workers wait
for one install) and returns the executable; when npm cannot install it (no npm, no registry) it
skips the test with the reason, or fails it under `CI` (true, 1, ...): `.ci/run` installs them
before the suite (`python -m tests.support.agent_clis`), so on CI a missing CLI is a broken install,
never a skip. Each test gives a CLI its own HOME (`cli_home`) and
points it at a fake model server of its own on loopback: nothing reaches the network.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# name -> (npm package@version, executable): pinned, so a test sees the CLI it was written for.
PACKAGES: dict[str, tuple[str, str]] = {
    "claude": ("@anthropic-ai/claude-code@2.1.332", "claude"),
    "codex": ("@openai/codex@0.171.0", "codex"),
    "gemini": ("@google/gemini-cli@0.61.0", "gemini"),
    # ACP agents (tests/test_acp_*.py)
    "qwen-code": ("@qwen-code/qwen-code@0.24.4", "qwen"),
    "opencode": ("opencode-ai@1.18.33", "opencode"),
}


def cache_dir() -> Path:
    configured = os.environ.get("SWARM_TEST_CLI_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "swarm-test-clis"


def installed(name: str) -> Path | None:
    """The executable if it is already in the cache, at the pinned version."""
    package, binary = PACKAGES[name]
    prefix = cache_dir() / name
    exe = prefix / "node_modules" / ".bin" / binary
    stamp = prefix / ".installed"
    if exe.exists() and stamp.exists() and stamp.read_text().strip() == package:
        return exe
    return None


def install(name: str, timeout: float = 600.0) -> Path:
    """Install the pinned package into the cache (once; concurrent callers wait on a lock)."""
    package, _ = PACKAGES[name]
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not installed (`.ci/run` installs it)")
    prefix = cache_dir() / name
    prefix.mkdir(parents=True, exist_ok=True)
    with open(prefix / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = installed(name)
        if found is not None:
            return found
        proc = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--silent", "--prefix", str(prefix),
             package], capture_output=True, text=True, timeout=timeout,
            stdin=subprocess.DEVNULL, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"npm install {package} failed: {proc.stderr.strip()[-500:]}")
        (prefix / ".installed").write_text(package + "\n")
    found = installed(name)
    if found is None:
        raise RuntimeError(f"npm installed {package} but its executable is missing")
    return found


def on_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def cli_path(name: str) -> Path:
    """The CLI's executable, installed if needed; when npm cannot install it here the test is
    skipped (with why), or failed on CI."""
    try:
        return installed(name) or install(name)
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        why = f"the real {name} CLI cannot be installed here: {exc}"
        if on_ci():
            pytest.fail(f"{why} (CI: a real-CLI test never skips)", pytrace=False)
        pytest.skip(why)


def cli_home(tmp_path: Path, name: str) -> Path:
    """A private HOME for one CLI run: none of the developer's settings, logins or sessions."""
    home = tmp_path / f"{name}-home"
    home.mkdir(exist_ok=True)
    return home


if __name__ == "__main__":  # `.ci/run`: install every CLI before the suite
    for cli in sys.argv[1:] or PACKAGES:
        print(f"{cli}: {install(cli)}")
