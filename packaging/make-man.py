#!/usr/bin/env python3
"""favfs.1: the page swift-argument-parser generates from the command line (every command and
option), with its generic EXIT STATUS replaced by the hand-written sections in favfs.1.sections,
blank lines (which mdoc warns about) turned into paragraph breaks, and lines that start with an
apostrophe (troff's other control character) escaped.

usage: make-man.py GENERATED SECTIONS OUTPUT"""
import re
import sys

generated, sections, output = sys.argv[1:4]
page = open(generated, encoding="utf-8").read()
extra = open(sections, encoding="utf-8").read().rstrip("\n") + "\n"
page = re.sub(r"^$", ".Pp", page, flags=re.M)
# A text line that starts with an apostrophe is a troff control line (help text such as
# "'setfattr -n …'" wrapped to a line start): \& makes it text again.
page = re.sub(r"^'", r"\\&'", page, flags=re.M)
start = page.find('.Sh "EXIT STATUS"')
end = page.find(".Sh AUTHORS")
if start < 0 or end < start:
    sys.exit("make-man.py: the generated page has no EXIT STATUS section before AUTHORS; check swift-argument-parser's output")
page = page[:start] + extra + page[end:]
open(output, "w", encoding="utf-8").write(page)
