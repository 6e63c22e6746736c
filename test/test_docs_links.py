"""Every relative link in README.md and docs/*.md leads somewhere: the file exists, and an ``#anchor`` names a
heading (as GitHub slugs it) or an ``id``/``name`` of that file.

The README sends a new user to docs/ for everything past the first hour; a link broken by a moved section or a
renamed heading would strand them, and nothing else would notice. Links inside code are not links and are skipped.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.S | re.M)
INLINE_CODE = re.compile(r"`[^`\n]*`")
MARKDOWN_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HTML_LINK = re.compile(r"""<(?:a|img|source|video)\b[^>]*?\b(?:href|src)\s*=\s*["']([^"']+)["']""", re.I)
HTML_ANCHOR = re.compile(r"""<[a-z]+\b[^>]*?\b(?:id|name)\s*=\s*["']([^"']+)["']""", re.I)
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$", re.M)


def prose(text: str) -> str:
    """The text without fenced code blocks and inline code (what looks like a link there is not one)."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: markup dropped, lower case, punctuation but ``-`` and ``_`` removed,
    spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading keeps its text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every anchor of a Markdown file: heading slugs (repeats numbered ``-1``, ``-2`` as GitHub does), and
    HTML ``id``/``name`` attributes."""
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    found: set[str] = set()
    seen: dict[str, int] = {}
    for match in HEADING.finditer(text):
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    found.update(HTML_ANCHOR.findall(text))
    return found


def links(path: Path) -> list[str]:
    text = prose(path.read_text(encoding="utf-8"))
    return MARKDOWN_LINK.findall(text) + HTML_LINK.findall(text)


def broken(path: Path, root: Path = ROOT) -> list[str]:
    """The relative links of ``path`` that lead nowhere (or out of ``root``), each with why."""
    problems = []
    for target in links(path):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("//"):
            continue  # https:, mailto:, ...: not checked offline
        file_part, _, anchor = target.partition("#")
        destination = (path.parent / unquote(file_part)).resolve() if file_part else path
        if not destination.is_relative_to(root):
            problems.append(f"{target}: outside the repository")
        elif not destination.exists():
            problems.append(f"{target}: no file {destination.relative_to(root)}")
        elif anchor and destination.suffix == ".md" and unquote(anchor) not in anchors(destination):
            problems.append(f"{target}: no heading or id '{anchor}' in {destination.relative_to(root)}")
    return problems


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(document):
    assert not broken(document), f"{document.relative_to(ROOT)}: {broken(document)}"


def test_the_readme_links_every_docs_page():
    """The README is the way in: every page of docs/ is linked from it, so none is reachable only by
    browsing the folder (and the link checks above then cover where it sends people)."""
    linked = {(ROOT / t.partition("#")[0]).resolve() for t in links(ROOT / "README.md") if t.startswith("docs/")}
    unlinked = [p.name for p in sorted((ROOT / "docs").glob("*.md")) if p.resolve() not in linked]
    assert not unlinked, f"docs pages the README does not link: {unlinked}"


def test_the_checker_finds_what_is_broken(tmp_path):
    """The checker itself can fail: a missing file, a missing anchor and a link out of the repository are
    reported; links in code, external links, GitHub's anchors of headings (repeats numbered) and ids are not."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "other.md").write_text("# Replay in Gazebo\n## `plan --goal` (CLI)\n<a id=\"here\"></a>\n")
    page = tmp_path / "docs" / "page.md"
    page.write_text(
        "# Page\n## Page\n"
        "[ok](other.md#replay-in-gazebo) [ok](other.md#plan---goal-cli) [ok](other.md#here) [ok](#page-1)\n"
        "[ok](https://example.com/x.md) `[code](nowhere.md)`\n```\n[fenced](nowhere.md)\n```\n"
        "[bad](missing.md) [bad](other.md#nowhere) [bad](../../outside.md) <img src=\"img.png\">\n"
    )
    assert sorted(p.split(": ")[0] for p in broken(page, root=tmp_path)) == [
        "../../outside.md", "img.png", "missing.md", "other.md#nowhere"], broken(page, root=tmp_path)
