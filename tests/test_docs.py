"""The docs stay true to the code: DESIGN's map names every module."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_design_map_names_every_module() -> None:
    design = (ROOT / "docs" / "DESIGN.md").read_text()
    layers = design.split("## Layers", 1)[1].split("\n## ", 1)[0]
    modules = [p for p in (ROOT / "swarm").rglob("*.py") if p.stem != "__init__"]
    assert len(modules) > 50
    missing = [str(p.relative_to(ROOT)) for p in modules
               if not re.search(rf"\b{re.escape(p.stem)}\b", layers)]
    assert missing == []


def test_design_links_resolve() -> None:
    for page in [ROOT / "docs" / "DESIGN.md", *(ROOT / "docs" / "design").glob("*.md")]:
        for target in re.findall(r"\]\(([^)#]+\.md)\)", page.read_text()):
            assert (page.parent / target).is_file(), f"{page.name} links to a missing {target}"
