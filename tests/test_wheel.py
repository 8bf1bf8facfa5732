"""The distribution as a user gets it: build the wheel from a copy of the source (offline: the
dev venv's setuptools, no index), check what it holds and says (name swarm-teams, the `swarm`
command, everything under the `swarm` package, no top-level `backends`, a license), install it
in a fresh venv and run `swarm demo` and `swarm demo --lead` from an empty directory.

The fresh venv has no swarm but the wheel's: its dependencies come from the dev venv's
site-packages through a path file (so the test needs no network); `.ci/run` also installs the
wheel with its dependencies from the index."""

from __future__ import annotations

import email.parser
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

from swarm import __version__
from swarm.core import paths
from tests.agent_fixtures import agent_processes

pytestmark = pytest.mark.slow  # builds a wheel, makes a venv, runs the demos

ROOT = Path(__file__).resolve().parents[1]
LEFT_OUT = shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info", "__pycache__",
                                  ".hypothesis", ".mypy_cache", ".ruff_cache", ".pytest_cache")


def run(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300, **kwargs)  # type: ignore[call-overload]
    assert proc.returncode == 0, f"{argv}: {proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    return proc  # type: ignore[no-any-return]


def build_wheel(out: Path) -> Path:
    """What `pip wheel --no-build-isolation` does, without pip's own start-up (seconds of CPU):
    call pyproject.toml's build backend (PEP 517 `build_wheel`) in a copy of the source."""
    source = out / "source"
    shutil.copytree(ROOT, source, symlinks=True, ignore=LEFT_OUT)
    backend = tomllib.loads((source / "pyproject.toml").read_text())["build-system"]["build-backend"]
    hook = "import importlib, sys; print(importlib.import_module(sys.argv[1]).build_wheel(sys.argv[2]))"
    built = run([sys.executable, "-c", hook, backend, str(out / "dist")], cwd=source)
    (wheel,) = (out / "dist").glob("*.whl")
    assert built.stdout.splitlines()[-1] == wheel.name
    return wheel


def test_the_wheel_installs_and_runs_the_demos_from_an_empty_directory(
        tmp_path: Path, swarm_home: Path) -> None:
    wheel = build_wheel(tmp_path)
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
    requires = {r for r in metadata.get_all("Requires-Dist") if "extra ==" not in r}
    assert requires == set(project["dependencies"])
    assert "swarm = swarm.cli.main:run" in entry_points

    venv = tmp_path / "fresh"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    site = Path(run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]
                    ).stdout.strip())
    # The dependencies, not swarm: the dev venv's editable swarm is activated by its own .pth
    # file, which a path listed here does not run.
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    # The dev venv's pip, run by the fresh interpreter (what `pip --python` does, in one process).
    run([str(python), "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheel)])
    empty = tmp_path / "empty"
    empty.mkdir()
    where = run([str(python), "-c", "import importlib.util as u, swarm; print(swarm.__file__);"
                 " print(u.find_spec('backends'))"], cwd=empty).stdout.split()
    assert where == [str(site / "swarm" / "__init__.py"), "None"]
    env = {**os.environ, "PATH": f"{venv / 'bin'}{os.pathsep}/usr/bin:/bin"}
    swarm = str(venv / "bin" / "swarm")
    assert run([swarm, "--version"], cwd=empty, env=env).stdout == f"swarm, version {__version__}\n"
    demo = run([swarm, "demo", "--backend", "hidden"], cwd=empty, env=env)
    assert "tasks done by 3 teammates" in demo.stdout and "(backend: hidden)" in demo.stdout
    lead = run([swarm, "demo", "--lead", "--backend", "hidden"], cwd=empty, env=env)
    assert f"scripted:{site / 'swarm' / 'examples' / 'lead.yaml'}" in lead.stdout
    assert "4 of 4 tasks done" in lead.stdout
    assert list(empty.iterdir()) == []  # the demos only read the directory
    assert agent_processes(swarm_home) == []
    assert not paths.team_dir("demo").exists()
