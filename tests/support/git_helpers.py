"""Real git repositories in tmp dirs for the worktree, merge and scope tests."""

from __future__ import annotations

import subprocess
from pathlib import Path


def git(cwd: Path | str, *args: str) -> str:
    proc = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True)
    assert proc.returncode == 0, f"git {' '.join(args)}: {proc.stderr}"
    return proc.stdout


def init_repo(path: Path, files: dict[str, str] | None = None, commit: bool = True) -> Path:
    """A repository on branch `main` with its own identity (teammates' commits use it too)."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "Test Lead")
    git(path, "config", "user.email", "lead@example.com")
    git(path, "config", "commit.gpgsign", "false")
    for name, text in (files if files is not None else {"a.txt": "one\n"}).items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    if commit:
        git(path, "add", "-A")
        git(path, "commit", "-q", "-m", "initial")
    return path


def commit_all(cwd: Path, message: str) -> str:
    git(cwd, "add", "-A")
    git(cwd, "commit", "-q", "-m", message)
    return git(cwd, "rev-parse", "HEAD").strip()


def worktree_paths(repo: Path) -> list[str]:
    out = git(repo, "worktree", "list", "--porcelain")
    return [line.split(" ", 1)[1] for line in out.splitlines() if line.startswith("worktree ")]


def prunable(repo: Path) -> list[str]:
    out = git(repo, "worktree", "list", "--porcelain")
    return [line for line in out.splitlines() if line.startswith("prunable")]


def branches(repo: Path) -> list[str]:
    return git(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads").split()


def snapshot(repo: Path) -> tuple[str, str]:
    """HEAD and the full `git status` (untracked files too): equal means untouched."""
    return (git(repo, "rev-parse", "HEAD").strip(),
            git(repo, "status", "--porcelain=v1", "--untracked-files=all"))
