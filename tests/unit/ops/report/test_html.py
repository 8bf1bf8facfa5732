"""The report page (swarm/ops/report/html.py): team data never leaves the attribute it is in."""

from __future__ import annotations

from swarm.core.team.team import Team
from swarm.ops.report.build import build_report
from swarm.ops.report.html import render_html
from tests.support.helpers import BREAKOUT


def test_the_report_never_lets_a_colour_on_disk_out_of_its_attribute(team: Team) -> None:
    team.update_member("alice", color=BREAKOUT)  # as an old or hand-edited team file has it
    page = render_html(build_report("alpha"))
    assert '"><!--' not in page
    assert "background:#6b7280" in page  # the default colour instead

