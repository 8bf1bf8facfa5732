"""The real agent CLIs the tests drive (tests/support/agent_clis.py): where npm cannot install one, a
developer's run skips the test with why, and a CI run (`CI=true`) fails it, so a broken install
never passes CI as a skip."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.agent_clis import cli_path


@pytest.fixture
def no_npm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # npm is nowhere
    monkeypatch.setenv("SWARM_TEST_CLI_CACHE", str(tmp_path / "cache"))


@pytest.mark.parametrize("value", ["true", "1"])
def test_under_ci_a_cli_that_cannot_be_installed_fails_the_test(
        no_npm: None, monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("CI", value)
    with pytest.raises((pytest.fail.Exception, pytest.skip.Exception)) as stopped:
        cli_path("claude")
    assert stopped.type is pytest.fail.Exception, "a skip under CI would pass a broken install"
    assert stopped.match("the real claude CLI cannot be installed.*npm is not installed")


@pytest.mark.parametrize("value", [None, "", "false", "0"])
def test_elsewhere_it_skips_the_test_with_why(
        no_npm: None, monkeypatch: pytest.MonkeyPatch, value: str | None) -> None:
    if value is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", value)
    with pytest.raises(pytest.skip.Exception, match="npm is not installed"):
        cli_path("codex")
