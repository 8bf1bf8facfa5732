"""Protected paths see what in-place editors and extractors write.

`sed -i`, `perl -i`, `awk -i inplace`, `ed`, `dd of=`, `truncate`, `sort -o`, `patch` (the files
its diff names), `tar -x` (`-C DIR`, and the members of an archive it can read), `unzip` (`-d
DIR`, members), `find -exec`/`xargs` with them, `install`, `rsync`: each writes files given as
operands, so a write into `.git/` by one of them (`core.fsmonitor` runs at the next `git status`)
asks under allow rules that do not name the path, and so does one outside the working directory.
Where the files cannot be known (an expansion, the files `find` or `xargs` hands over, an
archive or diff that cannot be read, stdin), it asks. The agent CLIs' own project configuration
(`.codex/`, `.gemini/`, `AGENTS.md`, `CLAUDE.md`, `GEMINI.md`) is protected like `.claude/`.
Real files in a real git repository; real bash shows the attacks work; the real rule check.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.support import rule_helpers as rules
from tests.support.bash_cases import EVERYTHING
from tests.support.git_helpers import init_repo
from tests.support.rule_helpers import asks, bash, decide, run

EDITORS = ("sed", "perl", "awk", "gawk", "ed", "ex", "dd", "truncate", "sort", "patch", "tar",
           "unzip", "install", "rsync", "gzip", "gunzip", "git")
ALLOW = [*EVERYTHING, *(f"Bash({p}:*)" for p in EDITORS)]
HOOK = "[core]\n\tfsmonitor = touch pwned;false\n"


def _tar(path: Path, members: dict[str, str], links: dict[str, str] | None = None) -> None:
    with tarfile.open(path, "w:gz" if path.suffix == ".tgz" else "w") as archive:
        for name, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type = tarfile.SYMTYPE
            info.linkname = target
            archive.addfile(info)


def _zip(path: Path, members: dict[str, str]) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in members.items():
            archive.writestr(name, text)


def _diff(name: str, old: str, new: str) -> str:
    return f"--- a/{name}\n+++ b/{name}\n@@ -1 +1,2 @@\n {old}+{new}"


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository and its archives and diffs, made once: each test gets a copy (six git
    commands for every one of ~175 cases were most of this module's time)."""
    work = init_repo(tmp_path_factory.mktemp("editors") / "proj",
                     {"a.txt": "one\n", "src/x.py": "x = 1\n", "sub/keep": ""})
    config = (work / ".git" / "config").read_text()
    (work / "evil.cfg").write_text(config + HOOK)
    _tar(work / "evil.tar", {".git/config": config + HOOK})
    _tar(work / "evil.tgz", {"src/ok.py": "", ".git/config": config + HOOK})
    _tar(work / "cfg.tar", {"config": config + HOOK})
    _tar(work / "link.tar", {}, links={"g": ".git"})
    _tar(work / "ok.tar", {"src/y.py": "y = 1\n", "docs/readme.md": "hi\n"})
    _tar(work / "up.tar", {"../escaped.txt": "x"})
    _zip(work / "evil.zip", {".git/config": config + HOOK})
    _zip(work / "ok.zip", {"src/z.py": "z = 1\n"})
    (work / "evil.diff").write_text(_diff(".git/config", "[core]\n", "\tfsmonitor = touch pwned;false\n"))
    (work / "codex.diff").write_text(_diff(".codex/config.toml", "x\n", "y\n"))
    (work / "ok.diff").write_text(_diff("a.txt", "one\n", "two\n"))
    return work


@pytest.fixture
def repo(template: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(template, tmp_path / "proj", symlinks=True))


def asks_everywhere_but_bypass(command: str, cwd: Path, why: str = "protected") -> None:
    rules.asks_everywhere_but_bypass(command, cwd, ALLOW, why)


# -- the attacks work in real bash, and now ask ---------------------------------------------------

ATTACKS = [
    ("sed", "sed -i 's/^\\[core\\]$/[core]\\n\\tfsmonitor = touch pwned;false/' .git/config"),
    ("perl", "perl -pi -e 's/^\\[core\\]$/[core]\\n\\tfsmonitor = touch pwned;false/' .git/config"),
    ("dd", "dd if=evil.cfg of=.git/config status=none"),
    ("tar", "tar -xf evil.tar"),
    ("tar", "tar -C .git -xf cfg.tar"),
    ("tar", "tar xzf evil.tgz"),
    ("unzip", "unzip -qo evil.zip"),
    ("patch", "patch -s -p1 < evil.diff"),
    ("patch", "patch -s .git/config < evil.diff"),
    ("ed", "printf '/^.core.$/a\\n\\tfsmonitor = touch pwned;false\\n.\\nw\\nq\\n' | ed -s .git/config"),
]


@pytest.mark.parametrize(("tool", "command"), ATTACKS)
def test_in_place_writes_to_git_config_run_code_and_now_ask(tool: str, command: str,
                                                             repo: Path) -> None:
    if shutil.which(tool) is None:
        pytest.skip(f"no {tool} here to show the attack")
    asks_everywhere_but_bypass(command, repo)
    assert bash(command, repo, "default", allow=["Bash"]).behavior == "ask", command
    run(command, repo)
    assert not (repo / "pwned").exists()
    subprocess.run(["git", "status"], cwd=repo, capture_output=True)
    assert (repo / "pwned").exists(), "the attack did not reach git: the test shows nothing"


# -- each editor's and extractor's operands ---------------------------------------------------

IN_PLACE_PROTECTED = [
    "sed -i s/a/b/ .git/config", "sed -i.bak -e s/a/b/ .git/config",
    "sed --in-place=.orig s/a/b/ .swarm/settings.json", "sed -Ei s/a/b/ .claude/settings.json",
    "sed -ni p .mcp.json", "sed -e s/a/b/ -i sub/.git/config", "sed s/a/b/ -i .git/config",
    "sed -i -- s/a/b/ .git/config", "sed -i -f script.sed .git/hooks/pre-commit",
    "sed --in-place --expression=s/a/b/ a.txt .git/config", "sed -i.json s/a/b/ .mcp",
    "sed 'w .git/config' a.txt", "sed -n 's/a/b/w .git/hooks/pre-commit' a.txt",
    "perl -pi -e s/a/b/ .git/config", "perl -i.bak -pe s/a/b/ .mcp.json",
    "perl -0777 -pi -e s/a/b/ .git/config", "perl -p -i -e s/a/b/ a.txt .swarm/settings.json",
    "awk -i inplace '{print}' .git/config", "gawk -i inplace -v x=1 '{print}' .git/config",
    "gawk --include=inplace '{print}' .claude/settings.json",
    "ed -s .git/config", "ex -sc wq .git/config",
    "dd if=evil.cfg of=.git/config", "dd of=.git/hooks/pre-commit if=evil.cfg conv=notrunc",
    "truncate -s 0 .git/config", "truncate --size=0 .mcp.json", "truncate -s0 -- .git/config",
    "sort -o .git/config a.txt", "sort --output=.mcp.json a.txt",
    "patch .git/config ok.diff", "patch -p1 < evil.diff", "patch -p1 -i evil.diff",
    "patch --input=evil.diff", "patch -o .git/config a.txt ok.diff", "patch -d .git -p1 < ok.diff",
    "patch -p1 -r .git/hooks/pre-commit < ok.diff", "patch < evil.diff",
    "tar -xf evil.tar", "tar xf evil.tar", "tar -xzf evil.tgz", "tar --extract --file=evil.tar",
    "tar -x -f evil.tar", "tar -xf ok.tar -C .git", "tar -C .git -xf ok.tar",
    "tar -xf ok.tar --directory=.swarm", "tar -x --directory .claude -f ok.tar",
    "tar xfC ok.tar .git", "tar -xf link.tar", "tar -x < evil.tar",
    "tar -cf .git/config a.txt", "tar --create --file=.mcp.json a.txt",
    "unzip evil.zip", "unzip -o evil.zip", "unzip ok.zip -d .git", "unzip -d .git ok.zip",
    "unzip -q ok.zip -d .swarm/x", "unzip -dsub/.git ok.zip",
    "install evil.cfg .git/config", "rsync evil.cfg .git/config",
    "gunzip .git/config.gz", "gzip -d .mcp.json.gz",
    "timeout 5 sed -i s/a/b/ .git/config", "bash -c 'sed -i s/a/b/ .git/config'",
    "cd sub && sed -i s/a/b/ ../.git/config", "cd .git && sed -i s/a/b/ config",
]


@pytest.mark.parametrize("command", IN_PLACE_PROTECTED)
def test_in_place_writes_to_protected_paths_ask(command: str, repo: Path) -> None:
    asks_everywhere_but_bypass(command, repo)


@pytest.mark.parametrize("command", [
    "sed -i s/a/b/ /etc/hosts", "sed -i s/a/b/ ../x.txt", "perl -pi -e s/a/b/ /tmp/x",
    "dd if=a.txt of=/tmp/x", "truncate -s 0 ../x", "tar -xf ok.tar -C /tmp", "tar -xf up.tar",
    "unzip ok.zip -d /tmp", "patch -o /tmp/x a.txt ok.diff", "sort -o /tmp/x a.txt",
    "ed -s /etc/hosts", "awk -i inplace 1 /tmp/x",
])
def test_in_place_writes_outside_the_working_directory_ask(command: str, repo: Path) -> None:
    asks(command, repo, ALLOW, "outside")


@pytest.mark.parametrize("command", [
    'sed -i s/a/b/ "$F"', "sed -i s/a/b/ *", "find . -exec sed -i s/a/b/ {} +",
    "find . -name '*.py' -exec sed -i s/a/b/ {} \\;", "find src -execdir perl -pi -e s/a/b/ {} +",
    "ls | xargs sed -i s/a/b/", "git ls-files | xargs perl -pi -e s/a/b/",
    "find . -type f -print0 | xargs -0 truncate -s 0", "ls | xargs -I{} dd if=a.txt of={}",
    'dd if=a.txt "$OUT"', "tar -xf missing.tar", "tar -xf -", "cat evil.tar | tar -x",
    "tar -xf ok.tar --transform=s,^,.git/,", 'tar -xf "$A"', "unzip missing.zip",
    "unzip 'e*.zip'", "patch -p1", "cat evil.diff | patch -p1", "patch -p1 < missing.diff",
    "patch -p1 -B .git/ < ok.diff", "ed -s a.txt", "find . -exec mv {} sub/ \\;",
    "sed 'e touch x' a.txt", "sed s/a/b/e a.txt", 'sed -n "$X"p a.txt', "sed $OPT s/a/b/ a.txt",
    "tar -xf ok.tar --to-command=sh", "tar -xf ok.tar -I 'sh -c x'", "cpio -idv < a.cpio",
    "7z x a.7z", "find . -fprint .git/config",
])
def test_in_place_writes_whose_files_are_not_known_ask(command: str, repo: Path) -> None:
    asks(command, repo, ALLOW)


@pytest.mark.parametrize("command", [
    "sed -i s/a/b/ a.txt", "sed -i.bak s/a/b/ src/x.py", "sed -n p .git/config",
    "sed -i '$a last line' a.txt", "sed -i ':a;N;$!ba;s/\\n/ /g' a.txt", "sed 's/[/]/x/' a.txt",
    "sed s/a/b/ .git/config > out.txt", "sed -e s/a/b/ -e s/c/d/ a.txt", "sed 's/w x/y/' a.txt",
    "perl -pi -e s/a/b/ src/x.py", "perl -ne print .git/config", "awk '{print}' .git/config",
    "dd if=.git/config of=copy.txt", "dd if=a.txt of=b.txt bs=1k", "truncate -s 0 a.txt",
    "sort -o a.txt a.txt", "sort .git/config", "patch -p1 < ok.diff", "patch -p1 -i ok.diff",
    "patch a.txt ok.diff", "tar -xf ok.tar", "tar xf ok.tar -C sub", "tar -tf evil.tar",
    "tar -xOf evil.tar", "tar -czf out.tgz src", "tar -cf - src | cat > out.tar",
    "unzip ok.zip", "unzip -o ok.zip -d sub", "unzip -l evil.zip", "unzip -p evil.zip",
    "gzip a.txt", "gzip -c .git/config > c.gz", "install -m 644 a.txt b.txt",
    "find . -name '*.py'", "find . -maxdepth 1 -exec wc -l {} +",
])
def test_ordinary_in_place_edits_and_extractions_stay_allowed(command: str, repo: Path) -> None:
    decision = bash(command, repo, "default", allow=ALLOW)
    assert decision.behavior == "allow", (command, decision.reason)


def test_a_rule_that_names_the_protected_file_allows_its_in_place_edit(repo: Path) -> None:
    command = "sed -i s/a/b/ .git/info/exclude"
    assert bash(command, repo, allow=[f"Bash({command})"]).behavior == "allow"
    assert bash(command, repo, allow=["Bash(sed -i s/a/b/ .git/info/exclude:*)"]).behavior == \
        "allow"
    assert bash("sed -i s/a/b/ .git/config", repo,
                allow=["Bash(sed -i s/a/b/ .git/info/exclude:*)", "Bash(sed:*)"]).behavior == "ask"


def test_an_edit_deny_rule_covers_in_place_writes(repo: Path) -> None:
    for command in ["sed -i s/a/b/ secrets/k", "dd if=a.txt of=secrets/k", "truncate -s0 secrets/k",
                    "perl -pi -e 1 secrets/k"]:
        decision = bash(command, repo, "bypassPermissions", deny=["Edit(secrets/**)"])
        assert decision.behavior == "deny", (command, decision.reason)


def test_an_archive_read_at_check_time_is_read_again_when_it_changes(repo: Path) -> None:
    assert bash("tar -xf ok.tar", repo, allow=ALLOW).behavior == "allow"
    os.replace(repo / "evil.tar", repo / "ok.tar")
    assert bash("tar -xf ok.tar", repo, allow=ALLOW).behavior == "ask"


# -- the agent CLIs' own project configuration --------------------------------------------------

AGENT_CONFIG = [".codex/config.toml", ".gemini/settings.json", "AGENTS.md", "CLAUDE.md",
                "GEMINI.md", "sub/AGENTS.md", "pkg/.gemini/settings.json", ".codex/prompts/x.md",
                "SWARM.md"]  # swarm's own instruction file, read into every prompt


@pytest.mark.parametrize("path", AGENT_CONFIG)
def test_the_agent_clis_project_configuration_is_protected(path: str, repo: Path) -> None:
    for command in [f"echo x > {path}", f"echo '{{}}' | tee {path}", f"cp a.txt {path}",
                    f"sed -i s/a/b/ {path}"]:
        asks_everywhere_but_bypass(command, repo)
        assert bash(command, repo, "default", allow=["Bash"]).behavior == "ask", command
    for tool, args in [("Write", {"file_path": path, "content": "x"}),
                       ("Edit", {"file_path": path, "old_string": "a", "new_string": "b"})]:
        assert decide(tool, args, "acceptEdits", repo).behavior == "ask", (tool, path)
        assert decide(tool, args, "default", repo, allow=["Edit"]).behavior == "ask", (tool, path)
        assert decide(tool, args, "bypassPermissions", repo).behavior == "allow"


def test_the_issues_codex_and_gemini_writes_ask_under_an_echo_rule(repo: Path) -> None:
    for command in ["echo > .codex/config.toml", "echo > .gemini/settings.json",
                    "patch -p1 < codex.diff"]:
        decision = bash(command, repo, "default", allow=["Bash(echo:*)", "Bash(patch:*)"])
        assert decision.behavior == "ask", (command, decision.reason)
        assert "protected" in decision.reason


@pytest.mark.parametrize("command", [
    "echo x > README.md", "echo x > docs/AGENTS.md.bak", "echo x > .codexrc", "echo x > SWARM",
    "echo x > src/gemini/settings.json", "echo x > my.codex/config.toml",
])
def test_paths_that_only_look_like_agent_configuration_are_not(command: str, repo: Path) -> None:
    assert bash(command, repo, allow=ALLOW).behavior == "allow", command
