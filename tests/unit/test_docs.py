"""The docs stay true to the code: every module is named in DESIGN's map or a design page's
module list, and DESIGN stays a map (one screen of folders, not a module list)."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def dotted(module: Path) -> str:
    """`swarm/core/store/disk.py` -> `core.store`: the name DESIGN's map gives it."""
    return ".".join(module.relative_to(ROOT / "swarm").with_suffix("").parts)


def named(name: str, text: str) -> bool:
    """`name` as a whole dotted name in `text` (optionally `swarm.`-prefixed): `core.team`
    is not named by `team`, `core.teams`, `x.core.team` or `core.team.py`."""
    return re.search(rf"(?<![\w.])(?:swarm\.)?{re.escape(name)}(?!\w|\.\w)", text) is not None


def section(text: str, heading: str) -> str:
    return text.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0] if heading in text else ""


def module_lists() -> str:
    """DESIGN's map, and the `## Modules` section of every page under docs/design."""
    design = (ROOT / "docs" / "DESIGN.md").read_text()
    pages = sorted((ROOT / "docs" / "design").glob("*.md"))
    return "\n".join([section(design, "## Map"),
                      *(section(p.read_text(), "## Modules") for p in pages)])


def test_the_docs_name_every_module_by_its_dotted_path() -> None:
    listed = module_lists()
    modules = [p for p in (ROOT / "swarm").rglob("*.py") if p.stem != "__init__"]
    assert len(modules) > 50
    missing = [dotted(p) for p in modules if not named(dotted(p), listed)]
    assert missing == []


def test_every_package_has_a_one_line_docstring_and_design_maps_core_folders() -> None:
    design = section((ROOT / "docs" / "DESIGN.md").read_text(), "## Map")
    for init in (ROOT / "swarm" / "core").rglob("__init__.py"):
        package = init.parent.relative_to(ROOT / "swarm" / "core")
        if package.parts:
            text = init.read_text().strip()
            assert text.startswith('"""') and text.count("\n") == 0, package
            assert f"{package.parts[-1]}/" in design, package


def test_design_stays_a_map() -> None:
    assert len((ROOT / "docs" / "DESIGN.md").read_text().splitlines()) <= 100


def test_a_bare_or_partial_name_does_not_count() -> None:
    assert named("core.team", "core.team (the team file)") and named("errors", "swarm.errors x")
    for text in ("team (the team file)", "core.teams", "x.core.team", "core.team.py",
                 "runtime.core.team"):
        assert not named("core.team", text), text


def test_design_links_resolve() -> None:
    for page in [ROOT / "docs" / "DESIGN.md", *(ROOT / "docs" / "design").glob("*.md")]:
        for target in re.findall(r"\]\(([^)#]+\.md)\)", page.read_text()):
            assert (page.parent / target).is_file(), f"{page.name} links to a missing {target}"


def test_the_mcp_page_shows_the_snippets_as_swarm_prints_them() -> None:
    from swarm.ops.clients import snippet

    page = (ROOT / "docs" / "guide" / "mcp.md").read_text()
    section = page.split("## Lead from Claude Code", 1)[1].split("\n## ", 1)[0]
    for client in ("claude", "codex", "gemini"):
        assert snippet(client, "alpha") in section, client
