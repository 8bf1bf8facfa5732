"""Helpers for the run report tests: read the page's member table back, render a page in a real
headless chromium, and write a synthetic run's files."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from swarm.core.records.state import AgentState, Usage
from swarm.core.store import paths
from swarm.core.store.disk import ensure_dir
from swarm.core.team.state import write_state

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run",
                  "--enable-logging=stderr", "--v=0", "--hide-scrollbars",
                  "--host-resolver-rules=MAP * ~NOTFOUND"]
CONSOLE_RE = re.compile(r":CONSOLE[(:]")
# Requests chromium makes on its own (blocked by the resolver rule anyway), not the page's.
BROWSER_OWN = re.compile(r"^https?://([a-z0-9-]+\.)*(google|googleapis|gstatic)\.com/")


class MemberTable(HTMLParser):
    """{member: {key: value}} from the cells' data-key/data-value in the members table."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: dict[str, dict[str, str]] = {}
        self._member: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = dict(attrs)
        if tag == "tr":
            self._member = attr.get("data-member")
            if self._member is not None:
                self.rows[self._member] = {}
        elif tag == "td" and self._member is not None and attr.get("data-key"):
            self.rows[self._member][str(attr["data-key"])] = str(attr.get("data-value"))


def member_table(page: str) -> dict[str, dict[str, str]]:
    parser = MemberTable()
    parser.feed(page)
    return parser.rows


def same_numbers(table_row: dict[str, str], json_row: dict[str, Any]) -> None:
    """Every cell of an HTML table row holds the JSON row's value for that key."""
    assert table_row, "no cells"
    for key, shown in table_row.items():
        assert shown == str(json_row[key]), (key, shown, json_row[key])


@dataclass
class Rendered:
    screenshot: Path
    console: list[str]  # console messages the page produced (errors included)
    requests: list[str]  # URLs the page asked for beyond its own file


def render(page: Path, out_dir: Path, timeout: float = 90.0) -> Rendered:
    """Open `page` in headless chromium (fresh profile, no network); screenshot it, and collect
    its console messages and the URLs it requested."""
    assert CHROMIUM is not None
    profile = out_dir / "chromium-profile"
    screenshot = out_dir / f"{page.stem}.png"
    netlog = out_dir / f"{page.stem}.netlog.json"
    argv = [CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--window-size=1300,1400",
            f"--log-net-log={netlog}", f"--screenshot={screenshot}", page.resolve().as_uri()]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, env={**os.environ, "HOME": str(out_dir)})
    try:
        _, stderr = proc.communicate(timeout=timeout)
    finally:
        with contextlib.suppress(ProcessLookupError):  # the browser's helpers, by its group
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0, stderr[-2000:]
    console = [line for line in stderr.splitlines() if CONSOLE_RE.search(line)]
    urls = set(re.findall(r'"url":"([^"]+)"', netlog.read_text(errors="replace"))
               if netlog.exists() else [])
    requests = sorted(u for u in urls if not u.startswith(("file:", "data:", "about:"))
                      and not BROWSER_OWN.match(u))
    return Rendered(screenshot, console, requests)


def synthetic_run(team: str, name: str, cycles: int, start: float | None = None,
                  step: float = 0.01) -> int:
    """Write `name`'s transcript and state as a real teammate would after `cycles` inputs, each
    one Bash call (4 entries per cycle, plus started); returns the number of entries."""
    from swarm.ops.report.build import iso

    path = paths.agent_transcript(team, name)
    ensure_dir(path.parent)
    start = start if start is not None else time.time()
    lines = [{"ts": iso(start), "kind": "event", "event": "started", "pid": 1, "model": "shell"}]
    at = start
    for i in range(cycles):
        use = f"toolu_{name}_{i}"
        for entry in (
            {"role": "user", "content": [{"type": "text", "text": f"do step {i}"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": use, "name": "Bash",
                                               "input": {"command": f"echo {i}"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use,
                                          "content": f"{i}\n"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
        ):
            at += step
            lines.append({"ts": iso(at), "kind": "message", "message": entry})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    write_state(team, name, AgentState(state="idle", turns=2 * cycles,
                                       usage=Usage(input_tokens=100 * cycles,
                                                   output_tokens=10 * cycles, cost_usd=0.001 * cycles)))
    return len(lines)
