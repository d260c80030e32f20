#!/usr/bin/env python3
"""Replaces the text between `<!-- NAME:begin -->` and `<!-- NAME:end -->` in docs/performance.md
with the contents of FILE (without its title, headings one level down), so each benchmark keeps its own section of
that page current.
Usage: bench/splice.py NAME FILE"""
import pathlib, re, sys

name, src = sys.argv[1], sys.argv[2]
page = pathlib.Path(__file__).resolve().parent.parent / "docs" / "performance.md"
text = page.read_text()
begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
if begin not in text or end not in text:
    sys.exit(f"{page}: markers {begin} / {end} not found")
# The source's title gives way to the section's own; its other headings move one level down.
body = re.sub(r"\A# [^\n]*\n+", "", pathlib.Path(src).read_text().strip())
body = re.sub(r"^(#+) ", r"#\1 ", body, flags=re.M)
new = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: f"{begin}\n{body}\n{end}", text, flags=re.S)
page.write_text(new)
print(f"updated the {name} section of {page}")
