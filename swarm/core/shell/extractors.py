"""What extractors write: `tar -x` (into `-C DIR`) and `unzip` (into `-d DIR`) write
the members of their archive, `patch` the files its diff names (and `-o`, `-r`); `tar -c` writes
its archive. The members and names are read at check time from the archive or diff file when
it is a regular file that can be read (`< file` too), remembered per file state (device, inode,
size, time); otherwise, or when the names are rewritten (`--transform`), or a program it runs
may write (`--to-command`, `-I`, `patch -e`), or it has more than MAX_MEMBERS members, the writes
are not known. Symbolic and hard links in an archive count as writes to what they point at
(`g -> .git`, then `g/config`).
Other extractors (`cpio -i`, `7z x`, `ar x`, ...) are not read: what they extract is not known.
"""

from __future__ import annotations

import os
import stat
from functools import lru_cache
from pathlib import Path

from msgspec import Struct

from swarm.core.shell.program_options import Spec, scan
from swarm.core.shell.protected import absolute
from swarm.core.shell.words import Argv, Word

MAX_ARCHIVE = 64 << 20  # bytes: a bigger archive is not listed at check time
MAX_MEMBERS = 2_000  # each is checked as a write (~0.1 ms): more are not known
MAX_DIFF = 8 << 20


class Where(Struct, frozen=True):
    stdin: Word | None  # the file a `<` gives the command
    bases: list[Path]  # each directory it may run in


def unknown(what: str) -> Word:
    """A write whose file is not known (the rules ask)."""
    return Word(what, literal=False)


def _files(word: Word, where: Where) -> list[Path] | None:
    """The regular files `word` names from each directory it may run in; None: not known."""
    if not word.literal or word.text == "-":
        return None
    found = []
    for base in where.bases:
        path = absolute(word.text, base)
        try:
            if stat.S_ISREG(os.stat(path).st_mode):  # never open a FIFO or a device
                found.append(path)
        except (OSError, ValueError):
            continue
    return found or None


def _state(path: Path) -> tuple[str, int, int, int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return str(path), info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns


def read_text(word: Word, where: Where, limit: int) -> str | None:
    """The text of a small file the command reads (a sed script, a diff); None: not known."""
    paths = _files(word, where)
    texts = [_text(state, limit) for p in paths or [] if (state := _state(p))]
    if not texts or any(t is None for t in texts):
        return None
    return "\n".join(t for t in texts if t is not None)


@lru_cache(maxsize=64)
def _text(state: tuple[str, int, int, int, int], limit: int) -> str | None:
    if state[3] > limit:
        return None
    try:
        with open(state[0], "rb") as f:
            return f.read(limit).decode(errors="replace")
    except OSError:
        return None


# -- archives ------------------------------------------------------------------------------------

class ArchiveMember(Struct, frozen=True):
    name: str
    link: str | None = None  # where a symbolic link points (relative to its folder)
    hard: str | None = None  # the member or file a hard link names (from the top)


@lru_cache(maxsize=64)
def _tar_members(state: tuple[str, int, int, int, int]) -> tuple[ArchiveMember, ...] | None:
    import tarfile  # only for a command that extracts one

    if state[3] > MAX_ARCHIVE:
        return None
    try:
        with tarfile.open(state[0], "r:*") as archive:
            out: list[ArchiveMember] = []
            for info in archive:
                out.append(ArchiveMember(info.name, info.linkname if info.issym() else None,
                                  info.linkname if info.islnk() else None))
                if len(out) > MAX_MEMBERS:
                    return None
            return tuple(out)
    except (OSError, EOFError, tarfile.TarError, ValueError):
        return None


@lru_cache(maxsize=64)
def _zip_members(state: tuple[str, int, int, int, int]) -> tuple[ArchiveMember, ...] | None:
    import zipfile

    if state[3] > MAX_ARCHIVE:
        return None
    try:
        with zipfile.ZipFile(state[0]) as archive:
            infos = archive.infolist()
            if len(infos) > MAX_MEMBERS:
                return None
            out = []
            for info in infos:
                link = None
                if stat.S_ISLNK(info.external_attr >> 16):
                    link = archive.read(info)[:4096].decode(errors="replace")
                out.append(ArchiveMember(info.filename, link))
            return tuple(out)
    except (OSError, EOFError, zipfile.BadZipFile, ValueError, NotImplementedError):
        return None


def _members(paths: list[Path] | None, kind: str) -> list[ArchiveMember] | None:
    reader = _tar_members if kind == "tar" else _zip_members
    found: list[ArchiveMember] = []
    for path in paths or []:
        state = _state(path)
        members = reader(state) if state else None
        if members is None:
            return None
        found += members
    return found if paths else None


def _member_writes(members: list[ArchiveMember], folders: list[str], strip: int,
                   absolute_names: bool, junk: bool = False) -> list[Word]:
    """Where each member lands in each folder, and what each link member points at."""
    out: list[Word] = []
    for member in members:
        name = member.name if absolute_names else member.name.lstrip("/")
        parts = [p for p in name.split("/") if p not in ("", ".")][strip:]
        if not parts:
            continue
        name = parts[-1] if junk else "/".join(parts)
        for folder in folders:
            out.append(Word(os.path.join(folder, name)))
            if member.link is not None:
                out.append(Word(os.path.join(folder, os.path.dirname(name), member.link)))
            if member.hard is not None:
                out.append(Word(os.path.join(folder, member.hard.lstrip("/"))))
    return out


# -- tar -----------------------------------------------------------------------------------------

_TAR = Spec(short_values="bCfFgHIKLNTVX", long_values=frozenset({
    "--file", "--directory", "--transform", "--xform", "--strip-components", "--to-command",
    "--use-compress-program", "--rsh-command", "--info-script", "--new-volume-script",
    "--checkpoint-action", "--files-from", "--exclude", "--exclude-from", "--owner", "--group",
    "--mode", "--mtime", "--format", "--label", "--blocking-factor", "--record-size",
    "--tape-length", "--newer", "--after-date", "--newer-mtime", "--listed-incremental",
    "--index-file", "--volno-file", "--suffix", "--warning", "--quoting-style", "--sort",
    "--level", "--owner-map", "--group-map", "--pax-option", "--starting-file", "--add-file",
    "--exclude-tag", "--exclude-tag-all", "--exclude-tag-under", "--hole-detection"}),
    long_optional=frozenset({"--one-top-level", "--backup", "--occurrence", "--checkpoint"}),
    long_flags=frozenset({"--extract", "--get", "--create", "--append", "--update", "--list",
                          "--diff", "--compare", "--delete", "--catenate", "--concatenate",
                          "--to-stdout", "--absolute-names", "--force-local", "--verbose"}))
_TAR_VALUES = "bCfFgHIKLNTVX"
_RUNS = ("-I", "--use-compress-program", "--to-command", "-F", "--info-script",
         "--new-volume-script", "--rsh-command")


def _old_style(args: Argv) -> Argv:
    """`tar xzf a.tar` (letters without a dash, their values in the next words) as `-x -z -f
    a.tar`."""
    if not args or not args[0].literal or args[0].text.startswith("-") or \
            not args[0].text.isalpha():
        return args
    out: list[Word] = []
    rest = list(args[1:])
    for letter in args[0].text:
        out.append(Word("-" + letter))
        if letter in _TAR_VALUES and rest:
            out.append(rest.pop(0))
    return (*out, *rest)


def tar(args: Argv, where: Where) -> list[Word]:
    found = scan(_old_style(args), _TAR)
    if found.unsure:
        return [unknown(f"{found.unsure.text} (it may be a tar option)")]
    names = found.names()
    archives = found.values("-f", "--file")
    out: list[Word] = found.values("--index-file", "--volno-file", "-g", "--listed-incremental")
    if names & set(_RUNS) or any("exec" in w.text for w in found.values("--checkpoint-action")):
        out.append(unknown("what a program tar runs writes"))
    if names & {"-c", "--create", "-r", "--append", "-u", "--update", "-A", "--catenate",
                "--concatenate", "--delete"}:
        return out + [w for w in archives if not (w.literal and w.text == "-")]
    if not names & {"-x", "--extract", "--get"} or names & {"-O", "--to-stdout"}:
        return out
    return out + _extracted(found.options, archives, names, where)


def _extracted(options: list[tuple[str, Word | None]], archives: list[Word], names: set[str],
               where: Where) -> list[Word]:
    folder, folders = "", []
    for name, value in options:  # -C moves for what follows, relative to the last -C
        if name in ("-C", "--directory") and value is not None:
            if not value.literal:
                return [unknown(f"{value.text} (the folder tar extracts into)")]
            folder = os.path.join(folder, value.text)
            folders.append(folder)
    folders = folders or [""]
    for name, value in options:
        if name == "--one-top-level":
            folders += [os.path.join(f, value.text) for f in list(folders)] if value else []
    if names & {"--transform", "--xform"}:
        return [unknown("the names tar's --transform makes")]
    strip_values = [v.text for n, v in options if n == "--strip-components" and v is not None]
    if strip_values and not strip_values[-1].isdigit():
        return [unknown(f"{strip_values[-1]} (tar's --strip-components)")]
    given = archives[-1] if archives else Word("-")
    if given.literal and ":" in given.text and "--force-local" not in names:
        return [unknown(f"{given.text} (a remote archive)")]
    source = where.stdin if given.literal and given.text == "-" else given
    paths = _files(source, where) if source is not None else None
    members = _members(paths, "tar")
    if members is None:
        shown = source.text if source is not None else "its input"
        return [unknown(f"the members of {shown} (an archive it cannot read)")]
    strip = int(strip_values[-1]) if strip_values else 0
    return _member_writes(members, folders, strip, bool(names & {"-P", "--absolute-names"}))


# -- unzip ---------------------------------------------------------------------------------------

def unzip(args: Argv, where: Where) -> list[Word]:
    """`unzip [-opts] FILE[.zip] [members] [-x excluded] [-d DIR]`."""
    folders: list[str] = []
    flags: set[str] = set()
    operands: list[Word] = []
    i, excluding = 0, False
    while i < len(args):
        word, text = args[i], args[i].text
        i += 1
        if word.literal and text.startswith("-") and len(text) > 1:
            excluding = False
            for j, flag in enumerate(text[1:], 1):
                if flag in "dP":
                    value = text[j + 1:] or (args[i].text if i < len(args) else "")
                    if not text[j + 1:]:
                        if i < len(args) and not args[i].literal and flag == "d":
                            return [unknown(f"{args[i].text} (the folder unzip extracts into)")]
                        i += 1
                    if flag == "d":
                        folders.append(value)
                    break
                if flag == "x":
                    excluding = True
                flags.add(flag)
        elif not excluding:
            operands.append(word)
    if flags & set("lvtzZpcT") or not operands:
        return []
    archive = operands[0]
    if not archive.literal or any(c in archive.text for c in "*?["):
        return [unknown(f"the members of {archive.text} (an archive it cannot read)")]
    paths = _files(archive, where) or _files(Word(archive.text + ".zip"), where)
    members = _members(paths, "zip")
    if members is None:
        return [unknown(f"the members of {archive.text} (an archive it cannot read)")]
    return _member_writes(members, folders or [""], 0, False, junk="j" in flags)


# -- patch ---------------------------------------------------------------------------------------

_PATCH = Spec(short_values="BDFVYdiopgrz", long_values=frozenset({
    "--prefix", "--ifdef", "--fuzz", "--version-control", "--basename-prefix", "--directory",
    "--input", "--output", "--strip", "--reject-file", "--suffix", "--get", "--quoting-style",
    "--reject-format", "--read-only"}),
    long_optional=frozenset({"--merge"}),
    long_flags=frozenset({"--backup", "--batch", "--forward", "--dry-run", "--silent", "--quiet",
                          "--reverse", "--unified", "--context", "--ed", "--normal", "--force",
                          "--posix", "--verbose", "--binary", "--remove-empty-files",
                          "--follow-symlinks", "--backup-if-mismatch"}))


def patch(args: Argv, where: Where) -> list[Word]:
    """`patch [options] [original [patchfile]]`: the original, -o, -r, and every file the diff
    names, under `-d DIR`, with each number of leading folders stripped unless -p says."""
    found = scan(args, _PATCH)
    if found.unsure:
        return [unknown(f"{found.unsure.text} (it may be a patch option)")]
    names = found.names()
    if "--dry-run" in names:
        return []
    out = [w for w in found.values("-o", "--output", "-r", "--reject-file")
           if not (w.literal and w.text == "-")]
    out += found.operands[:1]
    if names & {"-B", "--prefix", "-Y", "--basename-prefix"}:
        out.append(unknown("where patch puts its backups (-B, -Y)"))
    if names & {"-e", "--ed"}:
        out.append(unknown("what the ed script patch runs writes"))
    given = found.values("-i", "--input") or found.operands[1:2]
    source = given[-1] if given else where.stdin
    text = read_text(source, where, MAX_DIFF) if source is not None else None
    if text is None:
        shown = source.text if source is not None else "its input"
        return [*out, unknown(f"the files {shown} patches (a diff it cannot read)")]
    named, links = diff_names(text)
    if links:
        out.append(unknown("the symbolic links the diff makes"))
    if not named and not found.operands:
        out.append(unknown("the file patch asks for"))
    folders = [w.text for w in found.values("-d", "--directory")] or [""]
    strips = [w.text for w in found.values("-p", "--strip")]
    if strips and not strips[-1].isdigit():
        return [*out, unknown(f"{strips[-1]} (patch's -p)")]
    for name in named:
        parts = [p for p in name.split("/") if p]
        kept = [parts[int(strips[-1]):]] if strips else [parts[i:] for i in range(len(parts))]
        rooted = "/" if name.startswith("/") and (not strips or strips[-1] == "0") else ""
        for part in kept:
            if part:
                out += [Word(os.path.join(f, rooted + "/".join(part))) for f in folders]
    return out


def diff_names(text: str) -> tuple[list[str], bool]:
    """(the file names a diff names, whether it makes symbolic links)."""
    named: list[str] = []
    links = False
    for line in text.splitlines():
        head = line[:14]
        if head.startswith(("--- ", "+++ ", "*** ")):
            rest = line[4:]
            if rest.rstrip("* -").replace(",", "").isdigit() or rest.endswith(("****", "----")):
                continue  # a context hunk's range, not a name
        elif head.startswith("diff --git "):
            rest = line[11:]
            named += rest.split(" ")
            continue
        elif head.startswith(("Index: ", "rename to ", "rename from ", "copy to ")):
            rest = line.split(" ", 2)[-1] if head.startswith(("rename", "copy")) else line[7:]
        else:
            links = links or (head.startswith(("new file mode", "new mode")) and
                              line.rstrip().endswith("120000"))
            continue
        name = rest.split("\t")[0].strip()
        if name and name != "/dev/null":
            named.append(name.strip('"'))
    return named, links


def opaque_extractor(args: Argv, where: Where) -> list[Word]:
    """cpio, 7z, ar, jar, rar, pax: not read; extracting (`x`, `e`, `-i`, `-r`) is not known."""
    words = [w.text for w in args[:2] if w.literal]
    letters = "".join(t.lstrip("-") for t in words if t.replace("-", "").isalpha())
    if any(not w.literal for w in args) or set(letters) & set("xeir") or \
            any(t in ("--extract", "--pass-through", "--read") for t in words):
        return [unknown("what the extractor writes (its archive is not read)")]
    return []
