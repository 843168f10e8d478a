#!/usr/bin/env python3
"""Checks the links of Markdown pages: every relative link must name a file or folder of
the repository (and a `#section` of a Markdown page one of its headings); links with a
leading `/` are refused, web links are not followed. One line per broken link; exit 1 when
there is any.

    Tests/docs/check_links.py [FILE.md…]      (default: README.md and docs/*.md)
"""

import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HTML = re.compile(r"""<(?:img|a)\s[^>]*?(?:src|href)=["']([^"']+)["']""")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def anchors(path):
    """GitHub's anchors for the headings of a Markdown page."""
    seen, found = {}, set()
    in_fence = False
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("```"):
                in_fence = not in_fence
            if in_fence:
                continue
            match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if not match:
                continue
            text = re.sub(r"`([^`]*)`", r"\1", match.group(1))
            text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
            slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def links(path):
    in_fence = False
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if line.startswith("```"):
                in_fence = not in_fence
                continue
            if in_fence:
                continue
            text = re.sub(r"`[^`]*`", "", line)
            for pattern in (LINK, HTML):
                for match in pattern.finditer(text):
                    yield number, match.group(1)


def check(path):
    problems = []
    name = os.path.relpath(path, ROOT)
    for number, target in links(path):
        where = f"{name}:{number}"
        if SCHEME.match(target):
            continue
        if target.startswith("/"):
            problems.append(f"{where}: '{target}' is an absolute path; link relative to the page")
            continue
        file_part, _, fragment = target.partition("#")
        resolved = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
        if not resolved.startswith(ROOT + os.sep) and resolved != ROOT:
            problems.append(f"{where}: '{target}' leads out of the repository")
            continue
        if not os.path.exists(resolved):
            problems.append(f"{where}: '{target}' names no file in the repository")
            continue
        if fragment and resolved.endswith(".md") and fragment not in anchors(resolved):
            problems.append(f"{where}: '{target}': {os.path.relpath(resolved, ROOT)} has no heading #{fragment}")
    return problems


def main():
    files = sys.argv[1:] or [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    problems, count = [], 0
    for path in files:
        path = os.path.abspath(path)
        problems += check(path)
        count += sum(1 for _ in links(path))
    for problem in problems:
        print(problem)
    if problems:
        sys.exit(1)
    print(f"{count} links in {len(files)} pages resolve")


if __name__ == "__main__":
    main()
