"""`swarm doctor` finds damage under SWARM_HOME and `--fix` repairs what is safe:
quarantined files, leftovers, loose or foreign modes and owners, a full or read-only disk,
members dead without a record, a lead that is gone, stale git worktree entries."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from swarm.core.store import paths
from swarm.core.team.team import Team
from swarm.ops.doctor import damage
from swarm.ops.doctor.diagnose import diagnose, render
from tests.support.cli_runner import SWARM, run_swarm


def doctor(*args: str) -> dict[str, Any]:
    proc = run_swarm("doctor", "--json", *args, timeout=60)
    out: dict[str, Any] = json.loads(proc.stdout)
    # It fails when it finds a problem (one --fix repaired is none), and only then.
    assert proc.returncode == (1 if out["problems"] else 0), proc.stderr
    return out


def findings(report: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {f["path"]: f for f in report["findings"] if f["kind"] == kind}


def gone_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_quarantined_files_are_reported_and_never_removed(team: Team) -> None:
    team.send("alice", "fine")
    live = paths.inbox(team.name, "alice")
    with open(live, "ab") as handle:
        handle.write(b"garbage\n")
    assert len(team.inbox("alice").unread()) == 1  # the reader moves the bad line aside
    paths.task_file(team.name, "7").write_text("{broken")
    team.tasks.list()
    report = doctor("--fix")
    corrupt = findings(report, "corrupt")
    assert len(corrupt) == 2
    assert {Path(p).name.split(".corrupt-")[0] for p in corrupt} == {"alice.jsonl", "7.json"}
    assert all(f["fix"] is None and not f["fixed"] for f in corrupt.values())
    assert all(Path(p).exists() for p in corrupt)  # kept for a person to recover


def test_a_full_disk_is_reported(team: Team, monkeypatch: pytest.MonkeyPatch) -> None:
    assert findings(diagnose(), "disk_full") == {}
    monkeypatch.setattr(damage, "free_bytes", lambda path: (300 * 1024, False))
    report = diagnose()
    [full] = findings(report, "disk_full").values()
    assert full["path"] == str(paths.home()) and "only 300 KiB free" in full["detail"]
    assert "!!  disk_full:" in render(report)


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare for a private mount")
def test_a_read_only_disk_is_reported(team: Team) -> None:
    home = str(paths.home())
    script = (f"mount --bind {home} {home} && mount -o remount,ro,bind {home} && "
              f"exec {SWARM} doctor --json")
    proc = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True,
                          timeout=60)
    if proc.returncode != 0 and "mount" in proc.stderr:
        pytest.skip(f"cannot bind-mount read-only here: {proc.stderr.strip()}")
    assert proc.returncode == 1, proc.stderr  # the read-only disk is a problem
    report = json.loads(proc.stdout)
    [read_only] = findings(report, "read_only").values()
    assert read_only["path"] == home and "read-only" in read_only["detail"]
    assert report["swarm_home_writable"] is False


def test_kept_worktrees_are_the_users_checkouts_never_flagged_nor_chmodded(team: Team) -> None:
    """`$SWARM_HOME/kept-worktrees/<team>-<name>` holds checkouts moved out of deleted teams:
    their files have the repository's modes (0644, 0755 scripts). The directory itself is
    swarm's and is checked like the rest."""
    kept = paths.kept_worktrees_dir()
    checkout = kept / "alpha-w"
    (checkout / "src").mkdir(parents=True)
    kept.chmod(0o700)
    for path, mode in ((checkout, 0o755), (checkout / "src", 0o775),
                       (checkout / "README.md", 0o644), (checkout / "src" / "run.sh", 0o755)):
        if not path.exists():
            path.write_text("x")
        path.chmod(mode)
    assert findings(diagnose(), "insecure") == {}
    assert findings(diagnose(fix=True), "insecure") == {}
    assert (checkout / "README.md").stat().st_mode & 0o777 == 0o644
    assert (checkout / "src").stat().st_mode & 0o777 == 0o775
    kept.chmod(0o755)  # swarm's own directory: still checked
    assert set(findings(diagnose(), "insecure")) == {str(kept)}
