#!/usr/bin/env python3
"""Compiles every ```cpp block of the documentation, so that the code the docs show is code that
builds against the headers of this tree.

  compile_snippets.py --source DIR [--list] -- COMPILER FLAGS...

Pages: README.md, CHANGELOG.md, CONTRIBUTING.md, docs/**/*.md and examples/*/README.md.
A block with `int main(` is a whole program and is compiled alone. Any other block is a fragment:
it goes inside a coroutine body, `prema::task<> snippet() { <block> co_return; }`, with
<prema/prema.hpp> and the common standard headers included. An HTML comment right above the
fence (invisible on the rendered page) changes that:

  <!-- snippet: top -->           the block is declarations, placed at namespace scope
  <!-- snippet: body              the default placement, after the declarations below
  struct part { double error() const; };
  -->
  <!-- no-compile: REASON -->     not compiled; the reason is required

The fragments of one page share a namespace, in page order (a block may use what an earlier block
of its page declared); all fragments compile as one translation unit (one compiler run), with
#line directives so that an error names the page and line of the block. A whole program with a
snippet comment gets the standard headers and the comment's declarations in front.
FLAGS are the compiler's (the build passes -std=c++20, the project's include directories and
MPI's); -fsyntax-only is added. Exit status 1 names every block that failed.
"""
import argparse
import pathlib
import re
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^(?P<indent>\s*)```(?P<lang>[A-Za-z0-9_+-]*)\s*$")
DIRECTIVE = re.compile(r"^\s*<!--\s*(?P<kind>snippet|no-compile)\s*:?\s*(?P<rest>.*)$")

PRELUDE = """#include <prema/prema.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

"""


class Block:
    def __init__(self, page, line, code, placement, declarations, skip_reason):
        self.page = page                  # path relative to the source root
        self.line = line                  # line of the first code line in the page
        self.code = code                  # the block's lines, fence indentation removed
        self.placement = placement        # "program", "top" or "body"
        self.declarations = declarations  # (line, lines) from a snippet directive, or None
        self.skip_reason = skip_reason

    def where(self):
        return f"{self.page}:{self.line}"


def pages(root):
    found = [root / "README.md", root / "CHANGELOG.md", root / "CONTRIBUTING.md"]
    found += sorted((root / "docs").rglob("*.md"))
    found += sorted((root / "examples").glob("*/README.md"))
    return [p for p in found if p.is_file()]


def directive_above(lines, fence_index):
    """The snippet or no-compile comment that ends right above the fence, if any:
    (kind, first-line text, comment body lines with their line numbers)."""
    end = fence_index - 1
    if end < 0 or not lines[end].rstrip().endswith("-->"):
        return None
    start = end
    while start >= 0 and "<!--" not in lines[start]:
        start -= 1
    if start < 0:
        return None
    m = DIRECTIVE.match(lines[start])
    if not m:
        return None
    first = m.group("rest").split("-->")[0].strip()
    body = [(i + 1, lines[i]) for i in range(start + 1, end)] if end > start else []
    return m.group("kind"), first, body


def blocks_of(root, page):
    rel = page.relative_to(root).as_posix()
    lines = page.read_text(encoding="utf-8").split("\n")
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang = m.group("indent"), m.group("lang")
        j = i + 1
        while j < len(lines) and not re.match(r"^\s*```\s*$", lines[j]):
            j += 1
        if j == len(lines):
            sys.exit(f"{rel}:{i + 1}: a code fence that is never closed")
        if lang == "cpp":
            code = [l[len(indent):] if l.startswith(indent) else l.lstrip() for l in lines[i + 1:j]]
            placement, declarations, skip = "body", None, None
            d = directive_above(lines, i)
            if d and d[0] == "no-compile":
                if not d[1]:
                    sys.exit(f"{rel}:{i + 1}: <!-- no-compile: --> needs a reason")
                skip = d[1]
            elif d:
                placement = d[1] or "body"
                if placement not in ("top", "body"):
                    sys.exit(f"{rel}:{i + 1}: snippet placement '{placement}' is not top or body")
                if d[2]:
                    declarations = (d[2][0][0], [l for _, l in d[2]])
            if any(re.search(r"\bint\s+main\s*\(", l) for l in code):
                placement = "program"
            out.append(Block(rel, i + 2, code, placement, declarations, skip))
        i = j + 1
    return out


def line_directive(line, page):
    return f'#line {line} "{page}"'


def fragments_unit(blocks):
    """One translation unit: a namespace per page, in which the page's fragments follow one another
    in page order (a later block may use what an earlier one declared, as a reader would)."""
    text = [PRELUDE]
    page = None
    for n, b in enumerate(blocks):
        if b.page != page:
            if page is not None:
                text.append("}")
            page = b.page
            text.append(f"namespace page_{n} {{")
        if b.declarations:
            text.append(line_directive(b.declarations[0], b.page))
            text += b.declarations[1]
        if b.placement == "top":
            text.append(line_directive(b.line, b.page))
            text += b.code
        else:
            text.append(f"[[maybe_unused]] inline prema::task<> snippet_{n}() {{")
            text.append(line_directive(b.line, b.page))
            text += b.code
            text.append("co_return;")
            text.append("}")
    if page is not None:
        text.append("}")
    return "\n".join(text) + "\n"


def program_unit(b):
    """A whole program as it stands; with a snippet comment, after the prelude and the comment's
    declarations (what the page leaves out)."""
    text = []
    if b.declarations:
        text += [PRELUDE, line_directive(b.declarations[0], b.page)] + b.declarations[1]
    text += [line_directive(b.line, b.page)] + b.code
    return "\n".join(text) + "\n"


def compile_unit(command, text, label, workdir, fragment):
    src = pathlib.Path(workdir) / (re.sub(r"[^A-Za-z0-9]+", "_", label) + ".cpp")
    src.write_text(text, encoding="utf-8")
    flags = ["-fsyntax-only"]
    if fragment:  # a fragment shows a use, not a program: its results may go unused
        flags += ["-Wno-unused-variable", "-Wno-unused-but-set-variable"]
    r = subprocess.run(command + flags + [str(src)], capture_output=True, text=True)
    return r.returncode == 0, r.stdout + r.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source", required=True, help="the repository root")
    ap.add_argument("--list", action="store_true", help="list the blocks and how they compile")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="-- compiler and flags")
    a = ap.parse_args()
    root = pathlib.Path(a.source).resolve()
    command = a.command[1:] if a.command[:1] == ["--"] else a.command

    blocks = [b for p in pages(root) for b in blocks_of(root, p)]
    for b in blocks:
        if a.list:
            print(f"{b.where()}: {'skipped (' + b.skip_reason + ')' if b.skip_reason else b.placement}")
    if a.list:
        return 0
    if not command:
        sys.exit("no compiler given (after --)")

    todo = [b for b in blocks if not b.skip_reason]
    fragments = [b for b in todo if b.placement != "program"]
    programs = [b for b in todo if b.placement == "program"]
    failed = []
    with tempfile.TemporaryDirectory() as work:
        if fragments:
            ok, log = compile_unit(command, fragments_unit(fragments), "fragments", work, True)
            if not ok:
                failed.append(("fragments", log))
        for b in programs:
            ok, log = compile_unit(command, program_unit(b), b.where(), work, False)
            if not ok:
                failed.append((b.where(), log))
    skipped = len(blocks) - len(todo)
    print(f"{len(fragments)} fragment(s) and {len(programs)} program(s) compiled, "
          f"{skipped} block(s) marked no-compile")
    for label, log in failed:
        print(f"--- {label} does not compile:\n{log}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
