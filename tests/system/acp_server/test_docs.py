"""Each editor snippet of docs/guide/editor.md starts a `swarm acp` that answers `initialize`
(the official ACP SDK's client over stdio), and the README links the page."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support.acp_server_support import Editor
from tests.support.cli_runner import SWARM

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "docs" / "guide" / "editor.md"
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def snippets() -> list[tuple[str, list[str]]]:
    """(where, argv) of every snippet: the JSON `agent_servers` entries, the Lua adapter's
    `commands.default`."""
    found = []
    for lang, body in FENCE.findall(PAGE.read_text()):
        if lang == "json":
            for name, entry in json.loads(body)["agent_servers"].items():
                found.append((f"json {name}", [entry["command"], *entry["args"]]))
        elif lang == "lua":
            default = re.search(r"commands\s*=\s*\{\s*default\s*=\s*\{([^}]*)\}", body)
            assert default is not None, body
            found.append(("lua", re.findall(r'"([^"]*)"', default.group(1))))
    return found


def test_the_page_has_a_snippet_for_each_editor_and_the_readme_links_it() -> None:
    assert [where for where, _ in snippets()] == ["json swarm", "json swarm", "lua"]
    assert "(docs/guide/editor.md)" in (ROOT / "README.md").read_text()


@pytest.mark.parametrize("where,argv", snippets(), ids=lambda v: str(v))
def test_each_snippets_command_answers_initialize(where: str, argv: list[str],
                                                  tmp_path: Path) -> None:
    assert Path(argv[0]).name == "swarm", where
    ed = Editor(cwd=tmp_path, command=[SWARM, *argv[1:]])  # this checkout's swarm
    try:
        init = ed.initialize()
        assert init.protocol_version == 1 and init.agent_capabilities.load_session
        assert init.agent_info is not None and init.agent_info.name == "swarm"
    finally:
        assert ed.close() == 0, ed.stderr()
