"""The files a program writes because its operands say so: in-place editors (`sed -i`
and the files a sed script's `w` names, `perl -i`, `awk -i inplace`, `ed`/`ex`), `dd of=`,
`truncate`, `sort -o`, the gzip family (the file beside its operand), and the extractors
(`extractors`: `tar`, `unzip`, `patch`). `shellwrappers` hands over the files of `find -exec`
and `xargs` as words from an expansion.

`targets` gives each write as a word: literal (a path, relative to where the command runs) or
not (not known: a word from an expansion, a script or archive it cannot read, commands from
input). The rules treat them as the redirections' writes: protected paths ask, writes outside
the working directory ask, and a write that is not known asks under allow rules.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from swarm.core.shell import extractors
from swarm.core.shell.extractors import Where, unknown
from swarm.core.shell.parse import SimpleCommand
from swarm.core.shell.program_options import Spec, may_be_option, scan
from swarm.core.shell.words import Argv, Word, basename

Handler = Callable[[Argv, Where], list[Word]]


def targets(command: SimpleCommand, bases: list[Path]) -> list[Word]:
    """The files `command` writes by its operands (empty for every other program)."""
    handler = HANDLERS.get(command.program or "")
    if handler is None:
        return []
    return handler(command.argv[1:], Where(command.stdin, bases))


# -- sed ------------------------------------------------------------------------------------------

_SED = Spec(short_values="efl", short_optional="i",
            long_values=frozenset({"--expression", "--file", "--line-length"}),
            long_optional=frozenset({"--in-place"}),
            long_flags=frozenset({"--quiet", "--silent", "--debug", "--follow-symlinks", "--posix",
                                  "--regexp-extended", "--separate", "--sandbox", "--unbuffered",
                                  "--null-data", "--zero-terminated", "--binary", "--help",
                                  "--version"}))


def _sed(args: Argv, where: Where) -> list[Word]:
    found = scan(args, _SED)
    if found.unsure:
        return [unknown(f"{found.unsure.text} (it may be sed's -i)")]
    scripts = found.values("-e", "--expression")
    files = found.values("-f", "--file")
    operands = found.operands
    if not scripts and not files and operands:
        scripts, operands = [operands[0]], operands[1:]
    out: list[Word] = []
    for script in scripts:
        out += sed_script_writes(script.text) if script.literal else [
            unknown(f"{script.text} (a sed script it may write from)")]
    for script_file in files:
        text = extractors.read_text(script_file, where, 65536)
        out += [unknown(f"{script_file.text} (a sed script it cannot read)")] if text is None \
            else sed_script_writes(text)
    suffixes = [v.text if v is not None else "" for n, v in found.options
                if n in ("-i", "--in-place")]
    if suffixes:
        out += _in_place(operands, suffixes[-1], "sed")
    return out


def _in_place(files: list[Word], suffix: str, program: str) -> list[Word]:
    """The files an in-place edit rewrites, and their backups (`suffix`: `*` is the file's
    name; with a `/` the backup may go to another directory)."""
    out = list(files)
    if suffix and "/" in suffix:
        return [*out, unknown(f"{suffix} (where {program} puts its backups)")]
    for word in files if suffix else []:
        if not word.literal:
            continue
        folder, name = os.path.split(word.text)
        backup = suffix.replace("*", name) if "*" in suffix else name + suffix
        out.append(Word(os.path.join(folder, backup)))
    return out


_SED_ADDRESS = re.compile(r"\s*(?:\d+(?:~\d+)?|\$|[+~]\d+)\s*")
_SED_SIMPLE = set("=dDgGhHnNpPxzFlLqQ{}")


def sed_script_writes(script: str) -> list[Word]:
    """The files a sed script's `w`/`W` commands and `s///w` flags write; a word not known when
    it runs commands (`e`) or cannot be read."""
    out: list[Word] = []
    i, n = 0, len(script)
    while i < n:
        char = script[i]
        if char in " \t\n;!":
            i += 1
            continue
        if char == "#":
            i = _line_end(script, i)
            continue
        i = _sed_addresses(script, i)
        if i < 0 or i >= n:
            return out if i >= n else [*out, unknown("a sed script it cannot read")]
        command = script[i]
        i += 1
        if command in "wW":
            end = _line_end(script, i)
            out.append(Word(script[i:end].strip()))
            i = end
        elif command in "aicrRe:bTtv":
            if command == "e":
                return [*out, unknown("sed runs a command (e), which may write anything")]
            i = _text_end(script, i) if command in "aicrR:" else _label_end(script, i)
        elif command in "sy":
            i, flags = _sed_substitution(script, i, command)
            if i < 0:
                return [*out, unknown("a sed script it cannot read")]
            if "e" in flags:
                return [*out, unknown("sed runs a command (s///e), which may write anything")]
            if "w" in flags:
                end = _line_end(script, i)
                out.append(Word(script[i:end].strip()))
                i = end
        elif command in _SED_SIMPLE:
            while i < n and (script[i].isdigit() or script[i] in " \t"):
                i += 1
        elif command not in "}":
            return [*out, unknown("a sed script it cannot read")]
    return out


def _line_end(text: str, i: int) -> int:
    end = text.find("\n", i)
    return len(text) if end < 0 else end


def _text_end(text: str, i: int) -> int:
    """The end of `a`/`i`/`c` text: its lines go on while one ends in a backslash."""
    while True:
        end = _line_end(text, i)
        tail = len(text[i:end]) - len(text[i:end].rstrip("\\"))
        if end >= len(text) or tail % 2 == 0:
            return end
        i = end + 1


def _label_end(text: str, i: int) -> int:
    match = re.compile(r"[^;\n]*").match(text, i)
    return match.end() if match else len(text)


def _sed_addresses(script: str, i: int) -> int:
    """Past an address or a range (`3`, `$`, `/re/I`, `\\%re%`, `1~2`, `addr,+3`); -1: unread."""
    for _ in range(2):
        match = _SED_ADDRESS.match(script, i)
        if match and match.end() > i and match.group().strip():
            i = match.end()
        elif i < len(script) and script[i] in "/\\":
            delimiter = script[i] if script[i] == "/" else script[i + 1:i + 2]
            i = _delimited(script, i + (1 if script[i] == "/" else 2), delimiter)
            if i < 0:
                return -1
            while i < len(script) and script[i] in "IM":
                i += 1
        while i < len(script) and script[i] in " \t":
            i += 1
        if i < len(script) and script[i] == ",":
            i += 1
            continue
        break
    while i < len(script) and script[i] in " \t!":
        i += 1
    return i


def _delimited(text: str, i: int, delimiter: str, regex: bool = True) -> int:
    """The index after the unescaped `delimiter` from i (in a regex, not one inside a bracket
    expression: `s/[/]/x/`); -1 when there is none."""
    while i < len(text) and delimiter:
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == delimiter:
            return i + 1
        if regex and text[i] == "[":
            i = _bracket_end(text, i)
            continue
        i += 1
    return -1


def _bracket_end(text: str, i: int) -> int:
    """Past `[...]` from its `[` (a `]` first, or after `^`, is a member; `[:alpha:]` nests)."""
    j = i + 1
    j += text[j:j + 1] == "^"
    j += text[j:j + 1] == "]"
    while j < len(text) and text[j] != "]":
        if text[j] == "[" and text[j + 1:j + 2] in (":", ".", "="):
            close = text.find(text[j + 1] + "]", j + 2)
            j = close + 2 if close >= 0 else len(text)
            continue
        j += 1
    return j + 1 if j < len(text) else i + 1


def _sed_substitution(script: str, i: int, command: str) -> tuple[int, str]:
    """Past `s/re/new/flags` (or `y/ab/cd/`): the index after the flags and the flags."""
    if i >= len(script):
        return -1, ""
    delimiter = script[i]
    i = _delimited(script, i + 1, delimiter, regex=command == "s")
    i = _delimited(script, i, delimiter, regex=False) if i >= 0 else -1
    if i < 0 or command == "y":
        return i, ""
    start = i
    while i < len(script) and (script[i] in "gpiImMe" or script[i].isdigit()):
        i += 1
    if i < len(script) and script[i] == "w":
        return i + 1, script[start:i] + "w"
    return i, script[start:i]


# -- perl, awk, ed -----------------------------------------------------------------------------

def _perl(args: Argv, where: Where) -> list[Word]:
    """perl's switches come first (no permutation); -i[ext] edits the files after the script."""
    suffix: str | None = None
    code = False
    i = 0
    while i < len(args):
        word, text = args[i], args[i].text
        if may_be_option(word):
            return [unknown(f"{text} (it may be perl's -i)")]
        if not word.literal or not text.startswith("-") or text == "-":
            break
        i += 1
        if text == "--":
            break
        j = 1
        while j < len(text):
            flag = text[j]
            j += 1
            if flag in "eE":
                code = True
                i += 0 if text[j:] else 1
                break
            if flag == "i":
                suffix = text[j:]
                break
            if flag in "IMmxCdDV":
                i += 0 if text[j:] or flag != "I" else 1
                break
            if flag in "l0":
                while j < len(text) and (text[j].isdigit() or text[j] in "xXabcdefABCDEF"):
                    j += 1
    operands = list(args[i:])
    if suffix is None:
        return []
    files = operands if code else operands[1:]
    return _in_place(files, suffix, "perl")


_AWK = Spec(short_values="fvFilEe", long_values=frozenset({
    "--file", "--assign", "--field-separator", "--include", "--load", "--exec", "--source"}),
    permute=False)


def _awk(args: Argv, where: Where) -> list[Word]:
    found = scan(args, _AWK)
    includes = {v.text for v in found.values("-i", "--include")}
    if found.unsure:
        return [unknown(f"{found.unsure.text} (it may be awk's -i inplace)")]
    if not includes & {"inplace", "inplace.awk"}:
        return []
    program_given = found.values("-f", "--file", "-e", "--source", "-E", "--exec")
    files = found.operands if program_given else found.operands[1:]
    return [w for w in files if not (w.literal and re.match(r"[A-Za-z_]\w*=", w.text))]


def _ed(args: Argv, where: Where) -> list[Word]:
    """ed and ex read their commands from input or -c: `w FILE` may write anywhere."""
    files = [w for w in args if not (w.literal and w.text[:1] in "-+")]
    return [*files, unknown(f"the files {'ed' if args else 'it'}'s commands may write")]


# -- dd, truncate, sort, the gzip family -------------------------------------------------------

def _dd(args: Argv, where: Where) -> list[Word]:
    out: list[Word] = []
    for word in args:
        if not word.literal:
            return [unknown(f"{word.text} (it may be dd's of=)")]
        if word.text.startswith("of="):
            out.append(Word(word.text[3:]))
    return out


_TRUNCATE = Spec(short_values="sr", long_values=frozenset({"--size", "--reference"}),
                 long_flags=frozenset({"--no-create", "--io-blocks"}))
_SORT = Spec(short_values="ktoSTy", long_values=frozenset({
    "--key", "--field-separator", "--output", "--buffer-size", "--temporary-directory",
    "--batch-size", "--compress-program", "--files0-from", "--random-source", "--parallel",
    "--sort"}))
_GZIP = Spec(short_values="So", long_values=frozenset({"--suffix", "--output-dir-flat",
                                                        "--output-dir-mirror"}),
             long_flags=frozenset({"--stdout", "--to-stdout", "--list", "--test", "--keep",
                                   "--decompress", "--uncompress", "--force"}))


def _truncate(args: Argv, where: Where) -> list[Word]:
    found = scan(args, _TRUNCATE)
    return [unknown(found.unsure.text)] if found.unsure else found.operands


def _sort(args: Argv, where: Where) -> list[Word]:
    found = scan(args, _SORT)
    if found.unsure:
        return [unknown(f"{found.unsure.text} (it may be sort's -o)")]
    out = found.values("-o", "--output")
    if found.values("--compress-program"):
        out.append(unknown("what sort's --compress-program writes"))
    return out


def _gzip(args: Argv, where: Where) -> list[Word]:
    """Each file is replaced by the one beside it (`x.gz` -> `x`, `x` -> `x.gz`)."""
    found = scan(args, _GZIP)
    if found.unsure:
        return [unknown(found.unsure.text)]
    names = found.names()
    if names & {"-c", "--stdout", "--to-stdout", "-l", "--list", "-t", "--test"}:
        return []
    out = found.values("-o") + [unknown(f"{w.text} (an output directory)") for w in
                                found.values("--output-dir-flat", "--output-dir-mirror")]
    suffixes = [w.text for w in found.values("-S", "--suffix")]
    for word in found.operands:
        if word.literal and word.text == "-":
            continue
        out.append(word)
        if word.literal:
            stem = next((word.text[:-len(s)] for s in suffixes if s and word.text.endswith(s)),
                        os.path.splitext(word.text)[0])
            out.append(Word(stem))
    return out


HANDLERS: dict[str, Handler] = {
    "sed": _sed, "gsed": _sed, "perl": _perl, "awk": _awk, "gawk": _awk,
    "ed": _ed, "red": _ed, "ex": _ed, "dd": _dd, "truncate": _truncate, "sort": _sort,
    **{name: _gzip for name in ("gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "lzma",
                                "unlzma", "zstd", "unzstd")},
    "tar": extractors.tar, "gtar": extractors.tar, "bsdtar": extractors.tar,
    "unzip": extractors.unzip, "patch": extractors.patch,
    **{name: extractors.opaque_extractor for name in ("cpio", "7z", "7za", "7zr", "ar", "jar",
                                                      "unrar", "rar", "pax", "bsdcpio")},
}
assert all(basename(name) == name for name in HANDLERS)
