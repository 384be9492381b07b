#!/usr/bin/env python3
"""The layer rule of docs/design/layering.md, checked on every #include "..." of a source tree.

    check-layering.py ROOT

Layers, lowest first: base, coro, transport, objects, then lb and checkpoint (side by side:
neither may include the other), then runtime. A file may include its own layer and the layers
below it. A file's layer is its folder: src/<layer>/..., include/prema/<layer>/... and
include/prema/detail/<layer>/...; the headers directly in include/prema are listed below.
Exits 1 naming every file that includes a higher layer, 0 if none does.
"""

import pathlib
import re
import sys

RANK = {"base": 0, "coro": 1, "transport": 2, "objects": 3, "lb": 4, "checkpoint": 4, "runtime": 5}
# The public headers directly in include/prema, by the layer that defines what they declare.
TOP_LEVEL = {
    "config.hpp": "base",
    "error.hpp": "base",
    "wtime.hpp": "base",
    "version.hpp": "base",
    "quiescence.hpp": "transport",
    "checkpoint.hpp": "checkpoint",
    "runtime.hpp": "runtime",
    "prema.hpp": "runtime",
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(path):
    """The layer of a path relative to src/ or include/ ("lb/balancer.hpp",
    "prema/detail/coro/busy_meter.hpp"), or None for a path outside every layer."""
    parts = pathlib.PurePosixPath(path).parts
    if parts and parts[0] == "prema":
        parts = parts[1:]
        if parts and parts[0] == "detail":
            parts = parts[1:]
        elif len(parts) == 1:
            return TOP_LEVEL.get(parts[0], "unlisted")
    if len(parts) > 1 and parts[0] in RANK:
        return parts[0]
    return None


def may_include(mine, theirs):
    if mine == theirs:
        return True
    return RANK[theirs] < RANK[mine]


def main(root):
    root = pathlib.Path(root)
    files = sorted(p for base in ("src", "include/prema") if (root / base).is_dir()
                   for p in (root / base).rglob("*") if p.suffix in (".hpp", ".cpp", ".h"))
    if not files:
        print(f"check-layering: no sources under {root}/src or {root}/include/prema")
        return 2
    bad = []
    for f in files:
        rel = f.relative_to(root)
        inner = rel.relative_to(rel.parts[0]).as_posix()  # as others include it
        mine = layer_of(inner)
        if mine == "unlisted":
            bad.append(f"{rel}: a public header outside every layer: add it to TOP_LEVEL in "
                       f"scripts/check-layering.py")
            continue
        if mine is None:
            bad.append(f"{rel}: outside every layer (expected src/<layer>/ or "
                       f"include/prema/<layer>/ with <layer> one of {', '.join(RANK)})")
            continue
        text = f.read_text(encoding="utf-8", errors="replace")
        for n, line in enumerate(text.splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            theirs = layer_of(m.group(1))
            if theirs in (None, "unlisted"):
                # Relative includes of the same folder ("core_sharing.hpp") stay in the layer.
                if "/" not in m.group(1):
                    continue
                bad.append(f"{rel}:{n}: includes \"{m.group(1)}\", which belongs to no layer")
            elif not may_include(mine, theirs):
                bad.append(f"{rel}:{n}: the {mine} layer includes \"{m.group(1)}\" of the "
                           f"{theirs} layer above it")
    for line in bad:
        print(line)
    if bad:
        print(f"check-layering: {len(bad)} include(s) break the layer rule "
              f"(base -> coro -> transport -> objects -> lb | checkpoint -> runtime); a lower "
              f"layer calls up through a hook it owns (docs/design/layering.md)")
        return 1
    print(f"check-layering: {len(files)} files, every include within the layer rule")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
