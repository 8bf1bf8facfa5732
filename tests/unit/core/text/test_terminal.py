"""Bidi controls and invisible characters reach a terminal as visible escapes:
a Right-to-Left Override makes `txt.exe` read as `exe.txt`, a zero-width space splits a word a
person checks, a tag character hides text entirely ("Trojan Source", ASCII smuggling). The
terminal filter (`core/text/terminal.visible`, docs/design/trust.md "Terminal safety") shows them as `\\u202e`-style
escapes in human output, as it does for C0/C1; `--json` gives the data back unchanged.
"""

from __future__ import annotations

import json
import time

import pytest

from swarm.core.team.team import Team
from swarm.core.text.terminal import visible, visible_line
from tests.support.helpers import run_cli

BIDI = ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069",
        "\u200e", "\u200f", "\u061c"]
INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\u2061", "\u2062", "\u2063", "\u2064",
             "\ufeff", "\u00ad", "\u180e", "\U000e0041", "\U000e007f", "\ufff9"]


@pytest.mark.parametrize("char", BIDI + INVISIBLE)
def test_each_bidi_or_invisible_character_is_escaped(char: str) -> None:
    code = ord(char)  # U+00AD is a Latin-1 code point: `\\xad`, as C1 `\\x9b`
    shown = (f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}" if code <= 0xFFFF
             else f"\\U{code:08x}")
    assert visible(f"a{char}b") == f"a{shown}b"
    assert visible_line(f"a{char}b") == f"a{shown}b"
    assert visible(f"\x1b[1ma{char}b\x1b[0m", styles=True) == f"\x1b[1ma{shown}b\x1b[0m"


def test_the_trojan_source_line_reads_as_it_is() -> None:
    line = "access = 'user\u202e \u2066// admin only\u2069 \u2066'"
    assert visible(line) == "access = 'user\\u202e \\u2066// admin only\\u2069 \\u2066'"
    assert visible(visible(line)) == visible(line)


def test_ordinary_unicode_is_untouched() -> None:
    for text in ("plain text, ünïcødé ✓", "שלום עולם", "مرحبا", "日本語のテキスト", "emoji 🎉 ❤️",
                 "\u00e9 e\u0301", "tab\tand\nnewline"):
        assert visible(text) == text
        assert visible(text, styles=True) == text


def test_the_filter_stays_fast() -> None:
    text = ("an ordinary line of tool output, ünïcødé ✓ and 日本語\n" * 20_000)
    start = time.perf_counter()
    for _ in range(10):
        assert visible(text) is text or visible(text) == text
    assert time.perf_counter() - start < 5


def test_tasks_list_shows_the_escapes_and_json_the_data(
        team: Team, capsys: pytest.CaptureFixture[str]) -> None:
    subject = "rename \u202egpj.exe\u202c and zero\u200bwidth \U000e0068\U000e0069"
    team.tasks.add(subject, description="bom\ufeff soft\u00adhyphen \u2067rtl\u2069")
    code, out, err = run_cli(capsys, "tasks", "list", "--team", "alpha")
    assert code == 0, err
    assert "\\u202egpj.exe\\u202c" in out and "zero\\u200bwidth" in out, out
    assert "\\U000e0068\\U000e0069" in out, out
    assert not any(c in out for c in BIDI + INVISIBLE + ["\U000e0068"]), repr(out)
    code, out, err = run_cli(capsys, "tasks", "show", "1", "--team", "alpha")
    assert code == 0, err
    assert "bom\\ufeff soft\\xadhyphen \\u2067rtl\\u2069" in out, out
    code, out, _ = run_cli(capsys, "tasks", "show", "1", "--team", "alpha", "--json")
    assert json.loads(out)["subject"] == subject


def test_inbox_and_inbox_show_escape_them(team: Team, capsys: pytest.CaptureFixture[str]) -> None:
    text = "looks fine \u202eevil\u202c \u200b\u2060 \U000e0041"
    [mid] = team.send("team-lead", text, sender="bob", summary="sum\u2066mary")
    for args in (("inbox", "--team", "alpha", "--full"),
                 ("inbox", "show", mid[:8], "--team", "alpha")):
        code, out, err = run_cli(capsys, *args)
        assert code == 0, err
        assert "\\u202eevil\\u202c \\u200b\\u2060 \\U000e0041" in out, out
        assert not any(c in out for c in BIDI + INVISIBLE + ["\U000e0041"]), repr(out)
    code, out, _ = run_cli(capsys, "inbox", "--team", "alpha", "--json")
    assert json.loads(out)[0]["text"] == text
