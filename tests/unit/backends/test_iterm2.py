"""The iTerm2 backend's AppleScript strings (the backend through a recording fake `osascript`:
tests/system/backends/test_iterm2.py)."""

from __future__ import annotations

from swarm.backends.iterm2 import applescript_string


def test_applescript_string_escapes_backslash_quote_and_newlines() -> None:
    assert applescript_string('a\\b"c\nd') == '"a\\\\b\\"c\\nd"'
