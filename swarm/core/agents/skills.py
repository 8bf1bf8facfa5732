"""Skills: a folder `NAME/SKILL.md` (YAML front matter `name`, `description`, then instructions).

A definition's `skills: [NAME, ...]` preloads each one's body (front matter stripped, capped)
into the agent's system prompt. Places, highest first: the project's `.swarm/skills/NAME/` then
`.claude/skills/NAME/` (project configuration: in a trusted project only, and in its digest:
core.trust.workspace), then the user's `$SWARM_HOME/skills/NAME/` and `~/.claude/skills/NAME/`. Skills are text in a prompt:
nothing in them runs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from swarm.core.store import paths
from swarm.core.trust.workspace import ProjectConfig

SKILL_FILE = "SKILL.md"
USER_DIRS = (paths.user_skills_dir, paths.claude_user_skills_dir)  # highest first
# The project's skills (core.kinds places' keys), highest first: .swarm/skills over .claude/skills.
SKILL_PLACES = ("skills", "claude_skills")
SKILL_CAP = 20_000  # characters of one skill in the prompt
SKILL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")  # a folder name, never a path
_FRONT = re.compile(r"\A\ufeff?---[ \t]*\r?\n.*?^---[ \t]*\r?$\n?", re.DOTALL | re.MULTILINE)


def check_skills(value: object) -> list[str]:
    """A YAML list or a comma-separated string of skill names (folder names, not paths)."""
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("must be a list of skill names or a comma-separated string")
    for name in value:
        if not SKILL_NAME.fullmatch(name) or ".." in name:
            raise ValueError(f"{name!r} is not a skill name (letters, digits, '-', '_', '.')")
    return list(dict.fromkeys(value))


def find_skill(name: str, project: ProjectConfig) -> tuple[Path, str] | None:
    """(its SKILL.md, its text) from the project (trusted: `project` holds the files then) or the
    user; None when there is none or the name is not a plain name."""
    if not SKILL_NAME.fullmatch(name) or ".." in name:
        return None
    for kind in SKILL_PLACES:
        for file in project.of(kind):
            if file.path.parent.name == name:
                try:
                    return file.path, file.text()  # the bytes the trust digest was made of
                except (OSError, UnicodeDecodeError):
                    return None
    for directory in USER_DIRS:
        path = directory() / name / SKILL_FILE
        try:
            return path, path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
    return None


def skill_body(text: str) -> str:
    return _FRONT.sub("", text, count=1).strip()


def skills_part(names: Sequence[str], project: ProjectConfig) -> tuple[str, list[str]]:
    """The "Skills" part of a system prompt ('' when none) and one warning per missing skill."""
    parts: list[str] = []
    warnings: list[str] = []
    for name in names:
        found = find_skill(name, project)
        if found is None:
            places = ", ".join(str(d()) for d in USER_DIRS)
            warnings.append(f"skill {name!r} not found (looked in .swarm/skills, .claude/skills"
                            f" of a trusted project, {places}); the rest of the definition"
                            " applies")
            continue
        path, text = found
        body = skill_body(text)
        if len(body) > SKILL_CAP:
            body = (body[:SKILL_CAP].rstrip() + f"\n[truncated: only the first {SKILL_CAP:,}"
                    f" characters are shown. Read {path} for the rest]")
        parts.append(f"## Skill `{name}` ({path})\n{body}")
    if not parts:
        return "", warnings
    head = ("# Skills\nSkills your definition preloads: instructions for tasks you may be given,"
            " each under its name and file.")
    return "\n\n".join([head, *parts]), warnings
