"""The console a teammate prints to (swarm/runtime/teammate/console.py): lines cut to fit."""

from __future__ import annotations


def test_short_lines_are_cut_between_words() -> None:
    from io import StringIO

    from swarm.lead.headless import ProgressUI
    from swarm.runtime.teammate.console import brief

    assert brief("alpha beta gamma delta", 15) == "alpha beta..."
    assert brief("alpha   beta\ngamma", 100) == "alpha beta gamma"
    # One long word (a path, a URL) has no word to cut at: cut where the limit is.
    assert brief("/a/very/long/path/without/any/space", 12) == "/a/very/l..."
    out = StringIO()
    ProgressUI(out).message("w1", None, "counted the python files in the repository " * 10)
    line = out.getvalue().rstrip("\n")
    assert line.endswith("..."), line  # cut (the limit is 200), and after a whole word:
    assert line.split(": ", 1)[1].removesuffix("...").split(" ")[-1] in {
        "counted", "the", "python", "files", "in", "repository"}

