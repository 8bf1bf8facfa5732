"""Terminal safety: what a person reads never carries control characters that came from team data.

A message, a task, a tool's output or a transcript can hold bytes a terminal obeys: OSC 52 writes
the clipboard, OSC 0 sets the title, `ESC [2J` clears the screen, C1 `0x9b` is an 8-bit CSI. Every
human-readable view passes its text through `visible` at its output: C0 controls but newline and
tab, DEL and C1 print as `\\x1b`-style escapes, bidi controls and invisible format characters
(zero-width, BOM, tags) as `\\u202e`-style ones. Where swarm adds colours of its own (the panes, the
transcript, the lead's console), `styles=True` keeps exactly those SGR codes and escapes the rest;
the renderers filter the data itself before styling it, so data never brings a colour either.
`--json` output needs none of this: JSON escapes control characters itself.
"""

from __future__ import annotations

import re

# Characters that change how text around them reads without showing themselves: the bidi
# controls (U+061C, U+200E/F, U+202A-202E, U+2066-2069: "Trojan Source") and the invisible
# format characters (the soft hyphen, U+180E, the zero-width ones U+200B-200D, U+2060-2064 and
# U+206A-206F, the BOM U+FEFF, the annotation marks U+FFF9-FFFB, the tag characters
# U+E0000-E007F that hide whole texts).
_INVISIBLE = ("\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff"
              "\ufff9-\ufffb\U000e0000-\U000e007f")
# C0 but \t (09) and \n (0a), DEL, C1 (0x80-0x9f: U+0080-U+009F as text), and the above.
_CONTROL = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{_INVISIBLE}]")
# Swarm's own styles (core/text/view.py, lead/interactive.py): reset, bold, dim and the 16 colours.
_OWN_STYLE = r"\x1b\[(?:[0-2]|3[0-7]|9[0-7])m"
_CONTROL_OR_STYLE = re.compile(f"({_OWN_STYLE})|{_CONTROL.pattern}")


def _escape(match: re.Match[str]) -> str:
    char = match.group(0)
    if len(char) > 1:  # one of our styles (only matched with styles=True): kept
        return char
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


_ANY_CONTROL = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f{_INVISIBLE}]")


def visible_line(text: str) -> str:
    """`text` for one line of output (a path, a file name): every control character as a visible
    escape, newline and tab too, so no data can start a line of its own."""
    return _ANY_CONTROL.sub(_escape, text)


def visible(text: str, styles: bool = False) -> str:
    """`text` safe to print: control characters as visible escapes (a CRLF is a newline).
    `styles`: keep swarm's own colour codes (only for text swarm itself styled)."""
    if not _CONTROL.search(text):
        return text
    text = text.replace("\r\n", "\n")
    return (_CONTROL_OR_STYLE if styles else _CONTROL).sub(_escape, text)
