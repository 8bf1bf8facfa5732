"""The parse behind the Bash rules: what `shellparse.parse` returns for a few commands."""

from __future__ import annotations

from swarm.core.shell.parse import parse
from swarm.core.shell.words import Word


def argvs(command: str) -> list[list[str]]:
    return [[w.text for w in c.argv] for c in parse(command)]


def test_simple_commands_everywhere_in_order() -> None:
    assert argvs("a 1 && { b; } | (c) ; d $(e) `f` <(g)") == \
        [["a", "1"], ["b"], ["c"], ["d", "$(e)", "`f`", "<(g)"], ["e"], ["f"], ["g"]]


def test_quote_removal_and_literalness() -> None:
    (command,) = parse("""r''m "a b" 'c'd \\e $'\\t' "$X" *.py ~/x""")
    words = command.argv
    assert [w.text for w in words[:5]] == ["rm", "a b", "cd", "e", "\t"]
    assert [w.literal for w in words[5:7]] == [False, False]
    assert words[7].literal and not words[7].text.startswith("~")


def test_layers_writes_and_flags() -> None:
    (command,) = parse("sudo env A=1 nice -n 3 tee -a out.log > /dev/null 2>&1")
    assert [layer[0].text for layer in command.layers] == ["sudo", "env", "nice", "tee"]
    assert command.allowable == 1  # nothing behind sudo is allowed by its own rule
    assert command.sets_variables
    assert command.writes == (Word("/dev/null"), Word("out.log"))
    inner = parse("bash -c 'ls > x'")
    assert inner[0].runs_string and inner[1].writes == (Word("x"),)
    assert parse("$X y")[0].opaque == "its program comes from an expansion ($X)"
    assert parse("echo (")[0].opaque == "it does not parse as a shell command"
