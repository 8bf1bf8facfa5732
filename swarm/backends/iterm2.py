"""The `iterm2` backend: AppleScript through `osascript` (split, write the command, close).

Every value reaches AppleScript only as a string literal built by `applescript_string` (after
shell quoting, for the command line), so a prompt or cwd like `'; do shell script "rm -rf ~"`
stays text. Sessions we create carry the iTerm2 user variable `user.swarm_team`; close only
touches a session that has our team in it.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence

from swarm import settings
from swarm.backends.shellenv import discard, secrets_prelude, split_env
from swarm.errors import BadInputError, ITerm2Error

TEAM_VAR = "user.swarm_team"
AGENT_VAR = "user.swarm_agent"
OSASCRIPT_TIMEOUT = 30.0


def applescript_string(value: str) -> str:
    """An AppleScript string literal that evaluates to exactly `value`."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    escaped = escaped.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return f'"{escaped}"'


def command_line(argv: Sequence[str], env: Mapping[str, str], cwd: str) -> tuple[str, str | None]:
    """The shell line typed into the new session: `cd DIR && env K=V ... ARGV`, all quoted.

    Only variables the new session would not already have (SWARM_* and anything that differs
    from ours) are spelled out; secrets go through a private file, never onto the screen.
    """
    wanted = {k: v for k, v in env.items() if k.startswith("SWARM_") or os.environ.get(k) != v}
    plain, secret = split_env(wanted)
    prelude, secret_file = secrets_prelude(secret)
    assigns = [f"{k}={v}" for k, v in sorted(plain.items())]
    env_part = shlex.join(["env", *assigns]) + " " if assigns else ""
    line = f"cd {shlex.quote(cwd)} && {prelude}{env_part}{shlex.join(argv)}"
    return line, secret_file


def _find_session(session_id: str) -> str:
    """AppleScript that sets `found` to the session whose unique id is `session_id`."""
    return f"""  set found to missing value
  repeat with w in windows
    repeat with t in tabs of w
      repeat with s in sessions of t
        if (unique id of s) is {applescript_string(session_id)} then set found to s
      end repeat
    end repeat
  end repeat
"""


def _leader_session_id() -> str:
    """ITERM_SESSION_ID is `w0t0p0:<uuid>`; the uuid is the leader session's unique id."""
    return settings.iterm_session_id().rpartition(":")[2]


class ITerm2Backend:
    type = "iterm2"

    def __init__(self, team: str | None = None) -> None:
        self.team = team

    def _osascript(self, script: str) -> str:
        try:
            proc = subprocess.run(  # noqa: S603 - fixed argv; the script goes through stdin
                ["osascript", "-"], input=script, capture_output=True, text=True,
                timeout=OSASCRIPT_TIMEOUT, check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ITerm2Error(f"osascript failed: {exc}") from exc
        if proc.returncode != 0:
            raise ITerm2Error(f"osascript failed: {proc.stderr.strip() or proc.returncode}")
        return proc.stdout.strip()

    def is_available(self) -> bool:
        return sys.platform == "darwin" or shutil.which("osascript") is not None

    def is_running_inside(self) -> bool:
        return settings.in_iterm2()

    def create_pane(self, name: str, color: str | None) -> str:
        if not self.team:
            raise BadInputError("the iterm2 backend needs a team to create panes")
        # Split the leader's own session when we know it, else whatever session is in front.
        script = f"""tell application "iTerm2"
{_find_session(_leader_session_id())}  if found is missing value then set found to current session of current window
  tell found
    set newSession to (split vertically with default profile)
  end tell
  tell newSession
    set name to {applescript_string(name)}
    set variable named {applescript_string(TEAM_VAR)} to {applescript_string(self.team)}
    set variable named {applescript_string(AGENT_VAR)} to {applescript_string(name)}
  end tell
  return unique id of newSession
end tell
"""
        session_id = self._osascript(script)
        if not session_id:
            raise ITerm2Error("iTerm2 did not return the new session's id")
        return session_id

    def run_in_pane(
        self, pane_id: str, argv: Sequence[str], env: Mapping[str, str], cwd: str
    ) -> int | None:
        if not argv:
            raise BadInputError("nothing to run: empty command")
        line, secret_file = command_line(argv, env, cwd)
        script = f"""tell application "iTerm2"
{_find_session(pane_id)}  if found is missing value then error "no such session"
  tell found to write text {applescript_string(line)}
end tell
"""
        try:
            self._osascript(script)
        except ITerm2Error:
            discard(secret_file)
            raise
        return None  # the shell in the session is the parent; the agent reports its own pid

    def kill_pane(self, pane_id: str) -> bool:
        try:
            return self._osascript(self._if_ours(pane_id, "close found", "closed")) == "closed"
        except ITerm2Error:
            return False

    def is_pane_alive(self, pane_id: str) -> bool:
        try:
            return self._osascript(self._if_ours(pane_id, "", "alive")) == "alive"
        except ITerm2Error:
            return False

    def close_team(self) -> int:
        """Every session made for the team is a member's pane, closed with its member."""
        return 0

    def _if_ours(self, pane_id: str, action: str, result: str) -> str:
        """Script that runs `action` and returns `result` only for a session marked as ours."""
        # A foreign session has no such variable: reading it may fail or give missing value.
        test = (f"marker is {applescript_string(self.team)}" if self.team
                else 'marker is not ""')
        body = f"    {action}\n" if action else ""
        return f"""tell application "iTerm2"
{_find_session(pane_id)}  if found is missing value then return "missing"
  set marker to ""
  try
    set marker to (variable named {applescript_string(TEAM_VAR)} of found)
  end try
  if marker is missing value then set marker to ""
  if {test} then
{body}    return {applescript_string(result)}
  end if
  return "foreign"
end tell
"""
