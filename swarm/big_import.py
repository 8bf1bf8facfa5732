"""Big imports: a provider or MCP SDK (thousands of modules, millions of objects), or a
command's modules (`swarm agent`: the whole runtime). What they build lives as long as the
process.

Python's cyclic garbage collector runs many times during such an import (it counts
allocations) and its full passes walk everything imported so far; at exit it walks it all once
more. None of those objects is ever garbage, so the import runs with the collector paused, then
freezes what exists (`gc.freeze`: the documented way to take long-lived objects out of every
later collection). `import anthropic` drops from ~2.7 s to ~1.8 s of CPU, a shell teammate's
start by about a quarter; figures in docs/PERFORMANCE.md.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def big_import() -> Iterator[None]:
    """`with big_import(): import anthropic`: the collector paused inside, what exists frozen
    after. Cheap when the module is imported already (a freeze of the few new objects)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()
