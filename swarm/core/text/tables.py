"""Plain aligned tables that fit a width: every table swarm prints on a terminal is drawn here.

Without a width (output to a pipe or a file, or `--wide`) cells are shown whole. With one, the
table is made to fit it: first the columns the caller named optional are left out (least useful
first) while the others would not fit whole; then the free-text columns the caller named
(`stretch`: a reason, a subject) give up characters, then any column, the widest first, their
cells ending in `…`. No line is ever longer than the width.
"""

from __future__ import annotations

from collections.abc import Sequence

from msgspec import Struct

ELLIPSIS = "…"
GAP = "  "
# Below these widths (or the header's, when longer) a column is cut only when the table cannot
# fit otherwise: a cell cut shorter says little.
READABLE = 8
READABLE_TEXT = 16  # a free-text (stretch) column


class Table(Struct, frozen=True):
    text: str
    cut: bool  # a column was left out or a cell shortened


def render(rows: Sequence[Sequence[object]], headers: Sequence[str], width: int | None = None,
           optional: Sequence[str] = (), stretch: Sequence[str] = ()) -> Table:
    """`rows` under `headers`, two spaces between columns, trailing blanks stripped.

    `width`: the most characters a line may take (None: no limit). `optional`: headers of the
    columns that may be left out to fit, the first given going first. `stretch`: headers of
    free-text columns that give up characters before any other does.
    """
    if not rows:
        return Table("", False)
    cells = [[_cell(c) for c in headers], *[[_cell(c) for c in row] for row in rows]]
    natural = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    keep = list(range(len(headers)))
    widths = list(natural)
    if width is not None and _total(natural) > width:
        free = {i for i, h in enumerate(headers) if h in stretch}
        floor = [min(n, max(len(h), READABLE_TEXT if i in free else READABLE))
                 for i, (n, h) in enumerate(zip(natural, headers, strict=True))]
        for name in optional:  # while the others would not fit whole (free text at its floor)
            if _total([floor[i] if i in free else natural[i] for i in keep]) <= width:
                break
            if name in headers and headers.index(name) in keep and len(keep) > 1:
                keep.remove(headers.index(name))
        widths, floor = [natural[i] for i in keep], [floor[i] for i in keep]
        every = set(range(len(keep)))
        texts = {k for k in every if keep[k] in free}
        for columns, least in ((texts, floor), (every, floor), (every, [1] * len(keep))):
            widths = _narrow(widths, least, width, columns)
    lines = [GAP.join(_fit(row[i], w) for i, w in zip(keep, widths, strict=True)).rstrip()
             for row in cells]
    if width is not None:  # too narrow even for one character a column: cut the lines
        lines = [cut(line, width) for line in lines]
    return Table("\n".join(lines), widths != natural)


def cut(line: str, width: int) -> str:
    """`line`, or its first `width` - 1 characters and `…` when it is longer."""
    return line if len(line) <= width else _fit(line, width)


def _cell(value: object) -> str:
    # One line per row: a line break or tab in a cell (a crash reason) becomes a space.
    return " ".join(str(value).split())


def _total(widths: list[int]) -> int:
    return sum(widths) + len(GAP) * (len(widths) - 1)


def _narrow(widths: list[int], floor: list[int], width: int, columns: set[int]) -> list[int]:
    """Take a character at a time from the widest of `columns` still above its floor until
    the table fits `width` (so the cut columns end up equally wide, the others whole)."""
    widths = list(widths)
    while _total(widths) > width:
        above = [i for i in columns if widths[i] > floor[i]]
        if not above:
            break
        widths[max(above, key=lambda i: widths[i])] -= 1
    return widths


def _fit(cell: str, width: int) -> str:
    if len(cell) <= width:
        return cell.ljust(width)
    return cell[: max(width - 1, 0)] + ELLIPSIS if width > 0 else ""
