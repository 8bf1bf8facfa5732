"""The README's Quickstart, run as a newcomer pastes it: line by line in one shell, in an empty
SWARM_HOME and a small project (a git checkout with one commit), with the hidden backend
(SWARM_BACKEND). Every line must exit 0."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from swarm.core.store import paths
from tests.support.agent_fixtures import agent_processes, stop_tree
from tests.support.cli_runner import SWARM
from tests.support.git_helpers import git, init_repo, snapshot
from tests.support.helpers import SCRIPT_FAILED, as_script

README = Path(__file__).resolve().parents[3] / "README.md"


def quickstart_lines(readme: str) -> list[str]:
    """The commands of the first ```sh block under `## Quickstart` (comments and blanks out)."""
    section = readme.split("\n## Quickstart\n", 1)[1].split("\n## ", 1)[0]
    found = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert found, "README's Quickstart has no ```sh block"
    return [line.strip() for line in found.group(1).splitlines()
            if line.strip() and not line.strip().startswith("#")]


def test_quickstart_lines_are_found() -> None:
    lines = quickstart_lines(README.read_text())
    assert lines[0].split("#")[0].strip() == "swarm demo"  # a newcomer's first command
    assert any(line.startswith("export SWARM_TEAM=$(swarm team create ") for line in lines)
    assert all(line.startswith(("swarm ", "export ")) for line in lines)
    assert any(line.startswith("swarm spawn ") and "--worktree" in line for line in lines)
    assert any(line.startswith("swarm diff ") for line in lines)  # a teammate's changes, seen
    script = as_script(["true", "false", "true"])
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30)
    assert proc.returncode == SCRIPT_FAILED and "FAILED (exit 1) 2: false" in proc.stderr
    assert ">>> 3: true" not in proc.stdout  # it stopped at the failing line


def test_the_readme_quickstart_runs_line_by_line(tmp_path: Path, swarm_home: Path) -> None:
    project = init_repo(tmp_path / "project", {"src/app.py": "print('hi')  # TODO: say more\n",
                                               "README.md": "a project\n"})
    lines = quickstart_lines(README.read_text())
    env = {**os.environ, "SWARM_BACKEND": "hidden",
           "PATH": f"{Path(SWARM).parent}{os.pathsep}{os.environ['PATH']}"}
    try:
        proc = subprocess.run(["bash", "-c", as_script(lines)], capture_output=True, text=True,
                              cwd=project, env=env, timeout=600)
    finally:
        for leftover in agent_processes(swarm_home):
            stop_tree(leftover.pid)
    assert proc.returncode == 0, f"{proc.stderr[-3000:]}\n--- stdout:\n{proc.stdout[-3000:]}"
    assert proc.stdout.count("\n>>> ") == len(lines)  # every line ran
    assert (project / "hello.txt").exists()  # careful's request was approved, by name
    # scribe wrote in its own worktree, and `swarm diff` showed it; the checkout has only
    # hello.txt more, and no worktree or branch of the team is left (--discard-worktrees)
    assert "\n+notes from scribe\n" in proc.stdout and not (project / "NOTES.md").exists()
    assert snapshot(project)[1] == "?? hello.txt\n"
    assert git(project, "branch", "--list").split() == ["*", "main"]
    assert "4 of 4 tasks done" in proc.stdout  # the lead demo's report
    assert "approved Bash for careful" in proc.stdout
    assert agent_processes(swarm_home) == []
    assert [p.name for p in paths.teams_dir().iterdir()] == []  # every team deleted
