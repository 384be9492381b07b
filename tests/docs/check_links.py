#!/usr/bin/env python3
"""Checks that every relative link of the documentation resolves: the file or folder exists in
the tree and, for `page.md#anchor`, the page has a heading with that anchor (GitHub's rule:
lower case, punctuation dropped, spaces to dashes, -1, -2 ... for repeats).

  check_links.py --source DIR

Pages: README.md, CHANGELOG.md, CONTRIBUTING.md, docs/**/*.md and examples/*/README.md. Links
to other sites (http:, https:, mailto:) are not followed. Exit status 1 lists every broken link.
"""
import argparse
import pathlib
import re
import sys

LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def pages(root):
    found = [root / "README.md", root / "CHANGELOG.md", root / "CONTRIBUTING.md"]
    found += sorted((root / "docs").rglob("*.md"))
    found += sorted((root / "examples").glob("*/README.md"))
    return [p for p in found if p.is_file()]


def strip_code(lines):
    """The lines outside fenced code blocks, with inline code spans blanked (links there are text)."""
    out, fence = [], False
    for n, line in enumerate(lines, 1):
        if re.match(r"^\s*```", line):
            fence = not fence
            continue
        if not fence:
            out.append((n, re.sub(r"`[^`]*`", "", line)))
    return out


def slug(text):
    text = re.sub(r"`", "", text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link in a heading keeps its text
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page):
    seen, result = {}, set()
    fence = False
    for line in page.read_text(encoding="utf-8").split("\n"):
        if re.match(r"^\s*```", line):
            fence = not fence
            continue
        m = None if fence else HEADING.match(line)
        if m:
            s = slug(m.group(2))
            n = seen.get(s, 0)
            seen[s] = n + 1
            result.add(s if n == 0 else f"{s}-{n}")
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source", required=True, help="the repository root")
    root = pathlib.Path(ap.parse_args().source).resolve()
    broken, checked = [], 0
    for page in pages(root):
        rel = page.relative_to(root).as_posix()
        for n, line in strip_code(page.read_text(encoding="utf-8").split("\n")):
            for target in LINK.findall(line):
                if re.match(r"^[a-z]+:", target):
                    continue
                checked += 1
                path, _, anchor = target.partition("#")
                dest = (page.parent / path).resolve() if path else page
                if root not in dest.parents and dest != root:
                    broken.append(f"{rel}:{n}: {target}: outside the repository")
                elif not dest.exists():
                    broken.append(f"{rel}:{n}: {target}: no such file")
                elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                    broken.append(f"{rel}:{n}: {target}: no heading with anchor #{anchor}")
    print(f"{checked} relative link(s) checked, {len(broken)} broken")
    for b in broken:
        print(b, file=sys.stderr)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
