"""The one shape of a command's examples: an `Examples:` epilog, one command line per line."""

from __future__ import annotations


def examples(*lines: str) -> str:
    """A Click epilog listing `lines` as written (`\\b` keeps Click from re-wrapping them)."""
    return "\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines)
