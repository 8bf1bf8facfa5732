"""The dialogs of `swarm top` (cli.top_app): a yes/no confirmation, a one-line field, the keys.
Every text they show is given as `rich.text.Text` already made visible: never markup."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from swarm.ops.approvals import Pending

DIALOG_CSS = """
Confirm, Field, Help { align: center middle; }
#dialog { width: 90%; max-width: 100; height: auto; border: round $accent;
          background: $surface; padding: 0 1; }
"""

# The main screen (cli.top_app): the header, the members, the approval bar, the line, the tabs.
SCREEN_CSS = DIALOG_CSS + """
#head { height: 1; background: $primary-background; text-style: bold; }
#cols { height: 1; color: $text-muted; }
#members { height: 1fr; min-height: 4; border: none; text-wrap: nowrap;
           text-overflow: ellipsis; }
#bar { height: auto; max-height: 4; display: none; background: $warning-muted; }
#bar.waiting { display: block; }
#line { height: auto; max-height: 3; }
#tabs { height: 1fr; }
"""


class Confirm(ModalScreen[bool]):
    """`y` or Enter: True; `n` or Escape: False."""

    BINDINGS = [Binding("y,enter", "answer(True)", "yes"),
                Binding("n,escape", "answer(False)", "no")]

    def __init__(self, question: Text) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(self.question, id="question")
            yield Static(Text("y or Enter: yes    n or Esc: no", style="dim"))

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)


class Field(ModalScreen[str | None]):
    """One line typed: Enter sends it, Escape cancels (None)."""

    BINDINGS = [Binding("escape", "cancel", "cancel")]

    def __init__(self, prompt: Text, value: str = "", blink: bool = True) -> None:
        super().__init__()
        self.prompt = prompt
        self.value = value
        self.blink = blink

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(self.prompt)
            field = Input(value=self.value, id="field")
            field.cursor_blink = self.blink  # a blinking cursor makes screenshots differ
            yield field

    @on(Input.Submitted)
    def send(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


KEYS = [
    ("j / k, arrows", "select a member"),
    ("Tab, 1-5", "Output, Tasks, Mail, Diff, Info of the selected member"),
    ("y", "approve the request shown in the bar"),
    ("n", "deny it (\"denied by the person\")"),
    ("N", "deny it with a reason typed on one line"),
    ("a", "always: show the exact team rule, add it on y, and approve"),
    ("Y", "approve every waiting request identical to this one, from any member"),
    ("p", "the selected member's plan: y approve, n reject with feedback"),
    ("m", "message the selected member (one line)"),
    ("*", "message every teammate"),
    ("i", "interrupt the selected member's turn"),
    ("x", "ask the selected member to shut down"),
    ("X", "kill the selected member (asks again: y)"),
    ("r", "wake a stopped member (respawn, with its transcript)"),
    ("M", "change the selected member's permission mode (typed)"),
    ("/", "filter members by name (empty: all)"),
    ("?", "this help"),
    ("q, Ctrl-C", "quit"),
]


class Help(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "close", "close")]

    def compose(self) -> ComposeResult:
        text = Text("swarm top: keys\n\n", style="bold")
        for key, what in KEYS:
            text.append(f"{key:>14}  ", style="bold")
            text.append(f"{what}\n")
        text.append("\nEsc closes this help.", style="dim")
        with Vertical(id="dialog"):
            yield Static(text)

    def action_close(self) -> None:
        self.dismiss(None)


# -- the one-line outcome of an answer -------------------------------------------------------
def approved(found: Pending, more: str = "") -> str:
    return f"approved {found.request.tool_name} for {found.message.sender}{more}"


def denied(found: Pending) -> str:
    return f"denied {found.request.tool_name} for {found.message.sender}"


def planned(found: Pending) -> str:
    return f"plan of {found.message.sender}: {found.verdict}"
