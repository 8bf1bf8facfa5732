"""The guard of docs/design/tests.md's rule (tests/support/process_guard.py), in a pytest run of
its own (pytester, in this process): a test under tests/unit/ that starts a process fails with
one line naming it, a quick `git` is allowed, and a test elsewhere may start what it likes."""

from __future__ import annotations

import pytest

STARTS_SLEEP = """
import subprocess

def test_starts_sleep():
    subprocess.run(["sleep", "0"], check=True)
"""

STARTS_GIT = """
import subprocess

def test_starts_git():
    subprocess.run(["git", "--version"], check=True, capture_output=True)
"""

CATCHES_ITS_FAILURE = """
import subprocess

def test_swallows():
    try:
        subprocess.run(["sleep", "not-a-number"], check=True, capture_output=True)
    except subprocess.CalledProcessError:
        pass
"""

FIXTURE_STARTS_SLEEP = """
import subprocess
import pytest

@pytest.fixture
def sleeper():
    subprocess.run(["sleep", "0"], check=True)

def test_uses_it(sleeper):
    pass
"""

RULE = ("tests/unit is in-process: a test that starts sleep goes to tests/system/<area>/ "
        "(docs/design/tests.md)")


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini("[pytest]\n")  # its own rootdir: tests/unit/ there is what is guarded
    (pytester.path / "tests/unit").mkdir(parents=True)
    (pytester.path / "tests/system").mkdir()
    return pytester


def run(suite: pytest.Pytester) -> pytest.RunResult:
    # importlib: its tests/ is not this suite's `tests` package, already imported
    return suite.runpytest("-p", "tests.support.process_guard", "--import-mode=importlib",
                           "-p", "no:randomly", "-p", "no:cacheprovider",
                           "-W", "ignore::pytest.PytestAssertRewriteWarning")


def test_a_unit_test_that_starts_a_process_fails_naming_it_and_the_rule(
        suite: pytest.Pytester) -> None:
    (suite.path / "tests/unit/test_a.py").write_text(STARTS_SLEEP)
    result = run(suite)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([RULE, "FAILED tests/unit/test_a.py::test_starts_sleep - *"])


def test_a_quick_git_is_allowed_and_a_system_test_starts_what_it_likes(
        suite: pytest.Pytester) -> None:
    (suite.path / "tests/unit/test_git.py").write_text(STARTS_GIT)
    (suite.path / "tests/system/test_b.py").write_text(STARTS_SLEEP)
    run(suite).assert_outcomes(passed=2)


def test_a_process_is_refused_even_when_the_test_catches_its_failure_or_a_fixture_starts_it(
        suite: pytest.Pytester) -> None:
    (suite.path / "tests/unit/test_c.py").write_text(CATCHES_ITS_FAILURE)
    (suite.path / "tests/unit/test_d.py").write_text(FIXTURE_STARTS_SLEEP)
    result = run(suite)
    result.assert_outcomes(failed=1, errors=1)
    assert result.stdout.lines.count(RULE) == 2
    result.stdout.fnmatch_lines(["FAILED tests/unit/test_c.py::test_swallows - *",
                                 "ERROR tests/unit/test_d.py::test_uses_it - *"])
