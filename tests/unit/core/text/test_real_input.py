"""What an approver is shown (swarm/core/text/real_input.py): the real input, the requester's
words marked as its own."""

from __future__ import annotations

from swarm.core.records.protocol import PermissionRequest
from tests.support.approval_helpers import LIE, REAL


def test_the_renderer_shows_real_input_and_marks_the_requesters_words() -> None:
    from swarm.core.text.real_input import request_line, shown_input

    request = PermissionRequest(agent_id="m@t", tool_name="Bash", description=LIE,
                                input={"command": REAL})
    assert request_line(request) == f'Bash: {REAL} (says: "{LIE}")'
    honest = PermissionRequest(agent_id="m@t", tool_name="Bash", description=f"Bash: {REAL}",
                               input={"command": REAL})
    assert request_line(honest) == f"Bash: {REAL}"  # nothing to flag
    assert shown_input("Write", {"file_path": "a/b.txt", "content": "héllo"}) == \
        "Write a/b.txt (6 bytes)"
    assert shown_input("Edit", {"file_path": "x.py", "old_string": "a", "new_string": "bcd",
                                "replace_all": True}) == \
        "Edit x.py (replace 1 byte with 3 bytes, every occurrence)"
    # A second line of a command cannot hide: line breaks are shown.
    assert shown_input("Bash", {"command": "echo hi\nrm -rf x"}) == "Bash: echo hi ↵ rm -rf x"
    assert shown_input("mcp__s__t", {"b": 1, "a": "x"}) == 'mcp__s__t {"b": 1, "a": "x"}'
    honest_lines = PermissionRequest(agent_id="m@t", tool_name="Bash",
                                     description="Bash: echo hi\nrm -rf x",
                                     input={"command": "echo hi\nrm -rf x"})
    assert request_line(honest_lines) == "Bash: echo hi ↵ rm -rf x"
    long = shown_input("Bash", {"command": "echo " + "x" * 5000})
    assert long.endswith("more characters: see `swarm permissions list --json`]")

