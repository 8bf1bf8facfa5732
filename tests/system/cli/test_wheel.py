"""The distribution as a user gets it: `make wheel` in a copy of the source (offline: the dev
venv's setuptools, no index) builds dist/swarm_teams-*.whl, the file the README's install without
PyPI names; check what it holds and says (name swarm-teams, the `swarm` command, everything under
the `swarm` package, no top-level `backends`, a license), install it in a fresh venv with NO
optional extra and run, from an empty directory, `swarm demo`, `swarm demo --lead`, the
documented `scripted:examples/...` commands, and every command that needs a missing extra (one
line naming `pip install 'swarm-teams[EXTRA]'`, no traceback).

The fresh venv has no swarm but the wheel's: its dependencies come from the dev venv's
site-packages through a path file to a directory of links to the distributions swarm-teams
requires without an extra (so the test needs no network, and `google`, `botocore` and `redis`,
which the dev venv has, are missing as on a plain install); `.ci/run` also installs the wheel
with its dependencies from the index."""

from __future__ import annotations

import email.parser
import importlib.metadata
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path
from typing import NamedTuple

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from swarm import __version__
from swarm.core.records.names import LEAD_NAME
from swarm.core.store import paths
from swarm.core.team.team import Team
from tests.support.agent_fixtures import agent_processes

ROOT = Path(__file__).resolve().parents[3]
LEFT_OUT = shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info", "__pycache__",
                                  ".hypothesis", ".mypy_cache", ".ruff_cache", ".pytest_cache")
EXTRA_MODULES = ("google", "botocore", "boto3", "redis")  # what the extras bring, nothing else


def run(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300, **kwargs)  # type: ignore[call-overload]
    assert proc.returncode == 0, f"{argv}: {proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    return proc  # type: ignore[no-any-return]


def build_wheel(out: Path) -> Path:
    """`make wheel` (what the README tells a user without PyPI) in a copy of the source, with the
    dev venv's python and setuptools (no build isolation: no index)."""
    source = out / "source"
    shutil.copytree(ROOT, source, symlinks=True, ignore=LEFT_OUT)
    run(["make", "-s", "wheel", f"PYTHON={sys.executable}", "WHEEL_FLAGS=--no-build-isolation"],
        cwd=source)
    (wheel,) = (source / "dist").glob("*.whl")
    return wheel


def base_dependencies(into: Path) -> Path:
    """A directory of links to what swarm-teams requires without an extra (and pip, to install
    the wheel), each distribution with its dist-info, taken from the dev venv."""
    into.mkdir()
    purelib = Path(sysconfig.get_paths()["purelib"])
    seen: set[str] = set()
    todo = ["swarm-teams", "pip"]
    while todo:
        name = canonicalize_name(todo.pop())
        if name in seen:
            continue
        seen.add(name)
        for line in importlib.metadata.requires(name) or []:
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    for name in seen - {"swarm-teams"}:
        for file in importlib.metadata.distribution(name).files or []:
            top = file.parts[0]
            if top not in ("..", "__pycache__") and not (into / top).exists():
                (into / top).symlink_to(purelib / top)
    return into


class Installed(NamedTuple):
    wheel: Path
    venv: Path
    site: Path

    @property
    def swarm(self) -> str:
        return str(self.venv / "bin" / "swarm")

    def env(self, **extra: str) -> dict[str, str]:
        return {**os.environ, "PATH": f"{self.venv / 'bin'}{os.pathsep}/usr/bin:/bin", **extra}


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    out = tmp_path_factory.mktemp("wheel")
    wheel = build_wheel(out)
    venv = out / "fresh"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    site = Path(run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]
                    ).stdout.strip())
    # The dependencies, not swarm: the dev venv's editable swarm is activated by its own .pth
    # file, which a path listed here does not run.
    (site / "dependencies.pth").write_text(f"{base_dependencies(out / 'dependencies')}\n")
    # The dev venv's pip, run by the fresh interpreter (what `pip --python` does, in one process).
    run([str(python), "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheel)])
    return Installed(wheel, venv, site)


@pytest.fixture
def empty(tmp_path: Path) -> Path:
    where = tmp_path / "empty"
    where.mkdir()
    return where


def test_the_wheel_installs_and_runs_the_demos_from_an_empty_directory(
        installed: Installed, empty: Path, swarm_home: Path) -> None:
    wheel, site = installed.wheel, installed.site
    assert wheel.name == f"swarm_teams-{__version__}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        info = next(n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = email.parser.Parser().parsestr(archive.read(info).decode())
        entry_points = archive.read(info.replace("METADATA", "entry_points.txt")).decode()
        license_text = archive.read(info.replace("METADATA", "licenses/LICENSE")).decode()
    tops = {n.split("/", 1)[0] for n in names}
    assert tops == {"swarm", f"swarm_teams-{__version__}.dist-info"}  # no top-level `backends`
    for packaged in ("swarm/backends/tmux.py", "swarm/backends/resolve.py", "swarm/py.typed",
                     "swarm/examples/lead.yaml", "swarm/examples/teammate.yaml"):
        assert packaged in names
    assert not any(n.startswith(("tests/", "scripts/")) for n in names)
    assert (metadata["Name"], metadata["Version"]) == ("swarm-teams", __version__)
    assert metadata["License-Expression"] == "MIT" and "MIT License" in license_text
    assert "Programming Language :: Python :: 3.11" in metadata.get_all("Classifier")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requires = {str(Requirement(r)) for r in metadata.get_all("Requires-Dist") if "extra ==" not in r}
    assert requires == {str(Requirement(r)) for r in project["dependencies"]}  # as pip reads them
    assert "swarm = swarm.cli.main:run" in entry_points

    python = str(installed.venv / "bin" / "python")
    where = run([python, "-c", "import importlib.util as u, swarm; print(swarm.__file__);"
                 " print(u.find_spec('backends'))"], cwd=empty).stdout.split()
    assert where == [str(site / "swarm" / "__init__.py"), "None"]
    # No extra's module: a plain install, as a user without [bedrock], [vertex], [redis] has.
    probe = f"import importlib.util as u; print([u.find_spec(m) for m in {EXTRA_MODULES!r}])"
    assert run([python, "-c", probe], cwd=empty).stdout.strip() == str([None] * len(EXTRA_MODULES))
    env, swarm = installed.env(), installed.swarm
    assert run([swarm, "--version"], cwd=empty, env=env).stdout == f"swarm, version {__version__}\n"
    demo = run([swarm, "demo", "--backend", "hidden"], cwd=empty, env=env)
    assert "tasks done by 3 teammates" in demo.stdout and "(backend: hidden)" in demo.stdout
    lead = run([swarm, "demo", "--lead", "--backend", "hidden"], cwd=empty, env=env)
    assert f"scripted:{site / 'swarm' / 'examples' / 'lead.yaml'}" in lead.stdout
    assert "4 of 4 tasks done" in lead.stdout
    assert list(empty.iterdir()) == []  # the demos only read the directory
    assert agent_processes(swarm_home) == []
    assert not paths.team_dir("demo").exists()


def test_the_documented_scripted_examples_run_from_an_installed_package(
        installed: Installed, empty: Path, swarm_home: Path) -> None:
    """docs/scripted.md's `scripted:examples/...` commands, in a directory with no examples/:
    the installed package's own files."""
    env, swarm = installed.env(SWARM_BACKEND="hidden"), installed.swarm
    lead = run([swarm, "lead", "--headless", "--permission-mode", "bypassPermissions", "--model",
                "scripted:examples/lead.yaml", "--teammate-model",
                "scripted:examples/teammate.yaml", "Survey this directory"], cwd=empty, env=env)
    # exit 0: every task done (else "unfinished tasks"); the scout replayed the packaged file
    assert "spawned scout (scripted:examples/teammate.yaml" in lead.stderr
    assert lead.stdout.strip() == "Checked the task list: each task shows its owner, status and" \
        " result."
    # A file of that name in the working directory is the one used (it comes first).
    (empty / "examples").mkdir()
    (empty / "examples" / "teammate.yaml").write_text("{nope")
    team = run([swarm, "team", "create", "own"], cwd=empty, env=env).stdout.strip()
    mine = subprocess.run([swarm, "spawn", "scout", "--team", team, "--model",
                           "scripted:examples/teammate.yaml", "--prompt", "Look around"],
                          cwd=empty, env=env, capture_output=True, text=True, timeout=60)
    assert mine.returncode == 2 and "does not parse" in mine.stderr, mine.stderr
    assert str(empty / "examples" / "teammate.yaml") in mine.stderr
    assert agent_processes(swarm_home) == []


def one_error_line(proc: subprocess.CompletedProcess[str], extra: str) -> str:
    assert proc.returncode in (1, 2), (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and "unexpected" not in proc.stderr, proc.stderr
    (line,) = proc.stderr.splitlines()
    assert line.startswith("swarm: error: ") and f"pip install 'swarm-teams[{extra}]'" in line
    return line


def test_without_extras_each_missing_one_is_named_in_one_line(
        installed: Installed, empty: Path, swarm_home: Path) -> None:
    env, swarm = installed.env(), installed.swarm

    def call(*argv: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([swarm, *argv], cwd=empty, env={**env, **extra},
                              capture_output=True, text=True, timeout=120)

    doctor = call("doctor")
    assert doctor.returncode == 0 and doctor.stderr == "", doctor.stderr
    for extra in ("bedrock", "vertex"):
        (row,) = [r for r in doctor.stdout.splitlines() if r.startswith(f"--  provider {extra}:")]
        assert f"pip install 'swarm-teams[{extra}]'" in row
    assert "swarm[" not in doctor.stdout  # another project's name on PyPI

    team = run([swarm, "team", "create", "alpha"], cwd=empty, env=env).stdout.strip()
    for extra in ("vertex", "bedrock"):
        line = one_error_line(call("spawn", "w", "--team", team, "--model", f"{extra}:x"), extra)
        assert f"model {extra}:x cannot run here" in line
    assert [m.name for m in Team.open(team).members()] == [LEAD_NAME]  # nothing registered

    redis = {"SWARM_STORE": "redis://127.0.0.1:1"}
    for argv in (("status", "--team", "alpha"), ("team", "list"), ("send", "x", "hi", "--team",
                                                                     "alpha")):
        one_error_line(call(*argv, **redis), "redis")
    doctor = call("doctor", **redis)
    # The store it cannot use is a problem: exit 1, never a traceback.
    assert doctor.returncode == 1 and "Traceback" not in doctor.stderr, doctor.stderr
    (row,) = [r for r in doctor.stdout.splitlines() if r.startswith("!!  store:")]
    assert "pip install 'swarm-teams[redis]'" in row and "127.0.0.1:1" not in row
