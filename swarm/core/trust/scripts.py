"""The scripts a project's configuration runs, so workspace trust digests them too: a hook whose
command is `./scripts/hook.sh` or `bash .swarm/hooks/x.sh`, an MCP server started as `python3
tools/server.py`, could otherwise be edited after `swarm trust` and still run trusted.

What counts (decided here, one rule for hooks and servers, in settings files, `.mcp.json` and
definitions): in each command, the command word when it is a path (`./x.sh`, `tools/run`,
`$CLAUDE_PROJECT_DIR/.claude/hooks/y.sh`), and the script an interpreter or `source` is given
(`bash x.sh`, `python3 -u tools/server.py`, `. ./env.sh`; `sh -c '...'` is read as a command in
turn). It counts when it is a file inside the project (the git root, or the directory holding the
configuration, e.g. a worktree), symlinks followed for the content. Not counted: plain command
names (a PATH lookup), files outside the project, other arguments and redirect targets (data a
hook writes would untrust the project on every run), scripts those scripts run in turn.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# Command words that run the file named by their first non-option argument.
INTERPRETER = re.compile(r"(ba|da|z|k|fi)?sh|python[0-9.]*|pypy[0-9.]*|node(js)?|ruby|perl|php|"
                         r"lua|tsx|ts-node|bun|Rscript|source|\.")
# Options after which an interpreter's next word is not a script (`python -m mod`, `-W x`).
TAKES_VALUE = {"-m", "-W", "-X", "-o", "-O", "--rcfile", "--init-file", "-e", "-r", "--require"}
WRAPPERS = {"env", "exec", "nohup", "command", "time", "builtin"}
SEPARATORS = {";", "&&", "||", "|", "&", "(", ")", "|&", ";;", "\n"}
REDIRECTS = {">", ">>", "<", "<<", "<<<", ">|", "&>", "&>>", "<>", ">&", "<&"}
PROJECT_VARS = re.compile(r"\$(\{CLAUDE_PROJECT_DIR\}|CLAUDE_PROJECT_DIR\b)")
MAX_DEPTH = 3  # `sh -c "bash -c '...'"`: deep enough, never unbounded


def _words(command: str) -> list[str]:
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:  # an unbalanced quote: bash would refuse it too; read plain words
        return command.split()


def script_words(command: str | list[str], depth: int = 0) -> Iterator[str]:
    """The words of a shell command (or an argv, for a server) that name scripts it runs."""
    words = _words(command) if isinstance(command, str) else list(command)
    first, interpreter, index = True, False, 0
    while index < len(words):
        word = words[index]
        index += 1
        if word in SEPARATORS:
            first, interpreter = True, False
        elif word in REDIRECTS:
            index += 1  # its target: a file read or written, not run
        elif first:
            if word in WRAPPERS or re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", word):
                continue
            first = False
            interpreter = bool(INTERPRETER.fullmatch(word.rsplit("/", 1)[-1]))
            if "/" in word:
                yield word
        elif not interpreter:
            continue
        elif word == "-c":  # `sh -c CODE`: the code is a command itself
            interpreter = False
            if index < len(words) and depth < MAX_DEPTH:
                yield from script_words(words[index], depth + 1)
                index += 1
        elif word in TAKES_VALUE:
            interpreter = False  # `python -m mod`: a module, not a file of ours
        elif not word.startswith("-"):
            interpreter = False
            yield word


def commands_in(value: Any) -> Iterator[str | list[str]]:
    """Every hook command (a shell string) and server command line (an argv) in a parsed
    settings file, `.mcp.json` or definition front matter, in any spelling."""
    if isinstance(value, dict):
        command = value.get("command")
        if isinstance(command, str):
            args = value.get("args")
            if isinstance(args, list):  # an MCP server: exec'd, not a shell string
                yield [command, *(str(a) for a in args)]
            else:
                yield command
        for key, inner in value.items():
            if key != "command":
                yield from commands_in(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from commands_in(inner)


def parsed(format: str, data: bytes, name: str) -> Any:
    """A configuration file's content as data, read as its `format` (core.kinds: json, toml,
    markdown front matter); None when it does not parse (the loaders and the summary report
    that; its own bytes are in the digest anyway)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if format == "toml":
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            return None
    if format == "markdown":
        from swarm.core.trust.front_matter import front_matter  # YAML: only for definition files

        split = front_matter(text, name)
        return split[0] if isinstance(split, tuple) else None
    try:
        return json.loads(text) if text.strip() else None
    except ValueError:
        return None


def _inside(path: str, roots: list[Path]) -> bool:
    return any(path == str(r) or path.startswith(str(r) + os.sep) for r in roots)


def named_scripts(value: Any, bases: list[Path]) -> list[Path]:
    """The files inside `bases` (the directory holding the configuration, then the project
    root) that the commands in `value` run as scripts, in order, each once."""
    out: list[Path] = []
    for command in commands_in(value):
        for word in script_words(command):
            word = PROJECT_VARS.sub(lambda _: str(bases[0]), word)
            if not word or "\0" in word or "://" in word:
                continue
            for base in bases:
                candidate = os.path.normpath(os.path.join(base, os.path.expanduser(word)))
                if _inside(candidate, bases) and os.path.isfile(candidate):
                    if Path(candidate) not in out:
                        out.append(Path(candidate))
                    break
    return out
