"""The fenced blocks of README.md and docs/*.md, each with the marker on the line before it
that says how it is tested (test_docs.py runs or checks every one):

    <!-- block: python -->        run as a script from the repository's root
    <!-- block: shell -->         run by bash in a scratch folder holding the repository's
                                  urdf/, config/ and examples/ (and the files `given`)
    <!-- block: parameters -->    a params file (or part of one) the node takes
    <!-- block: ros -->           ROS 2 commands: need a ROS 2 installation (or the workspace
                                  test_workspace.py builds); what they name is checked
    <!-- block: make -->          Makefile targets (CI runs `make test`, test_demo the demo)
    <!-- block: tested by FILE::TEST -->   that test runs it, reading it from this page

A block inside a `<!-- figures: NAME -->` section is written by `make NAME`
(scripts/figures.py) and needs no marker.

Prose: a paragraph or a list item outside fences, tables and headings; `prose_blocks`
gives each with its length in lines."""

import dataclasses
import re

from conftest import REPO

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
MARKER = re.compile(r"^\s*<!-- block: (.+?) -->\s*$")
FIGURES = re.compile(r"^\s*<!-- (end )?figures: ([\w-]+) -->\s*$")
KINDS = ("python", "shell", "parameters", "ros", "make", "tested by")


@dataclasses.dataclass
class Block:
    page: str            # relative to the repository
    line: int            # of the opening fence, from 1
    language: str
    text: str
    marker: str | None   # what follows "block: ", None when missing
    figures: str | None  # the figures section it is in

    @property
    def kind(self):
        if self.marker is None:
            return None
        return next((k for k in KINDS if self.marker == k or self.marker.startswith(k + " ")),
                    None)

    @property
    def name(self):
        return f"{self.page}:{self.line}"


def blocks(pages=PAGES):
    """Every fenced block of `pages`, in order."""
    found = []
    for path in pages:
        lines = path.read_text().splitlines()
        fence, figures, start = None, None, 0
        for i, line in enumerate(lines):
            stripped = line.strip()
            m = FIGURES.match(line)
            if m and fence is None:
                figures = None if m[1] else m[2]
            if fence is None and stripped.startswith("```"):
                fence, start = line[:line.index("`")], i
                continue
            if fence is not None and stripped == "```":
                marker = MARKER.match(lines[start - 1]) if start else None
                body = [text[len(fence):] if text.startswith(fence) else text
                        for text in lines[start + 1:i]]
                found.append(Block(str(path.relative_to(REPO)), start + 1,
                                   lines[start].strip()[3:].strip(), "\n".join(body) + "\n",
                                   marker[1] if marker else None, figures))
                fence = None
    return found


def block(page, containing):
    """The one block of `page` (relative path) whose text contains `containing`."""
    (found,) = [b for b in blocks([REPO / page]) if containing in b.text]
    return found


def prose_blocks(pages=PAGES):
    """(page, first line, number of lines) of every paragraph and list item outside fenced
    blocks, tables, headings and comments."""
    found = []
    for path in pages:
        current, start, fence = 0, 0, False
        for i, line in enumerate(path.read_text().splitlines() + [""], 1):
            stripped = line.strip()
            if stripped.startswith("```"):
                fence = not fence
            prose = (not fence and bool(stripped)
                     and not stripped.startswith(("```", "|", "#", "<!--")))
            if current and (not prose or re.match(r"\s*([-*+]|\d+\.)\s", line)):
                found.append((str(path.relative_to(REPO)), start, current))
                current = 0
            if prose:
                start = i if not current else start
                current += 1
    return found
