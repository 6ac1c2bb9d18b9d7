#!/usr/bin/env python3
"""favfs.1: the page swift-argument-parser generates from the command line (every command and
option), made into a page a reader can use:
- SYNOPSIS names the real forms (the generator says only "favfs subcommand");
- the top-level examples go to an EXAMPLES section, and every "Examples:" block is a literal
  display (no filling, no hyphenation: URLs and commands stay whole and copyable);
- each option's default, as `favfs COMMAND --help` shows it, is added where the page lacks it
  (the generator leaves defaults out);
- the generic EXIT STATUS is replaced by the hand-written sections in favfs.1.sections;
- blank lines (which mdoc warns about) become paragraph breaks, and text lines that start with
  an apostrophe (troff's other control character) are escaped.

usage: make-man.py GENERATED SECTIONS OUTPUT FAVFS_BINARY"""
import re
import subprocess
import sys

generated, sections, output, binary = sys.argv[1:5]
page = open(generated, encoding="utf-8").read()
extra = open(sections, encoding="utf-8").read().rstrip("\n") + "\n"


def fail(why):
    sys.exit(f"make-man.py: {why}; check swift-argument-parser's output")


SYNOPSIS = """.Sh SYNOPSIS
.Nm
.Cm mount
.Ar mountpoint
.Op Fl -remote Ar name | url
.Op Ar options
.Nm
.Cm unmount
.Ar mountpoint
.Op Fl -keep-cache
.Nm
.Cm status
.Op Fl -json | -watch
.Op Ar path ...
.Nm
.Cm remote
.Cm add | list | default | remove | test
.Op Ar arguments
.Nm
.Cm pin | unpin
.Ar path ...
.Nm
.Cm thumbnail
.Ar path
.Op Fl -output Ar file
.Nm mount
.Fl t Cm fuse.favfs
.Ar source dir
.Op Fl o Ar options
"""

start = page.find(".Sh SYNOPSIS")
desc = page.find(".Sh DESCRIPTION")
if start < 0 or desc < start:
    fail("no SYNOPSIS before DESCRIPTION")
page = page[:start] + SYNOPSIS + page[desc:]

# The top-level examples (right after .Sh DESCRIPTION, before the first list) become EXAMPLES.
m = re.search(r"^\.Sh DESCRIPTION\n(Examples:\n(?:  .*\n)+)", page, flags=re.M)
if not m:
    fail("DESCRIPTION does not open with the top-level examples")
top_examples = [line[2:] for line in m.group(1).splitlines()[1:]]
name_line = re.search(r'^\.Nd "(.*)"$', page, flags=re.M)
intro = name_line.group(1) if name_line else ""
page = page[:m.start(1)] + intro + "\nEvery command, with its options and defaults:\n" + page[m.end(1):]


def literal(lines):
    return ".Bd -literal -offset indent\n" + "\n".join(lines) + "\n.Ed\n"


# Every other "Examples:"/"Example:" block: a literal display.
def literal_block(match):
    lines = [line[2:] for line in match.group(2).splitlines()]
    return match.group(1) + "\n" + literal(lines)


page = re.sub(r"^(Examples?:)\n((?:  .*\n|\n(?=  ))+)", literal_block, page, flags=re.M)


# Defaults from --help: "  --name <value>  text ... (default: X)" possibly wrapped.
def defaults(command):
    try:
        text = subprocess.run([binary, *command, "--help"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit(f"make-man.py: cannot run {binary} {' '.join(command)} --help: {e}")
    options = text.split("OPTIONS:", 1)[-1]
    found, current, body = {}, None, []
    for line in options.splitlines() + [""]:
        head = re.match(r"^  (?:-\w, )?(--[\w-]+)", line)
        if head or not line.startswith("   "):
            if current:
                d = re.search(r"\(default: (.*?)\)\s*$", " ".join(body))
                if d:
                    found[current] = d.group(1)
            current, body = (head.group(1), [line]) if head else (None, [])
        else:
            body.append(line.strip())
    return found


def add_defaults(page, start, end, command):
    """Adds `(default: X)` to the options of the subcommand block page[start:end]."""
    block = page[start:end]
    for option, value in defaults(command).items():
        item = re.search(r"^\.It Fl (?:\w , )?" + re.escape(option[1:]) + r"\b.*\n((?:(?!\.It|\.El).*\n)+)", block, flags=re.M)
        if not item or "default" in item.group(1).lower():
            continue
        text = item.group(1).rstrip("\n")
        stop = "" if text.endswith(".") else "."
        block = block[:item.start(1)] + text + f"{stop} Default: {value}.\n" + block[item.end(1):]
    return page[:start] + block + page[end:]


# The subcommands as the generated page nests them: ".It Em NAME" at the top level, and the
# remote subcommands inside `remote`.
for command in [["mount"], ["unmount"], ["status"], ["thumbnail"], ["pin"], ["unpin"],
                ["remote", "add"], ["remote", "list"], ["remote", "remove"], ["remote", "default"], ["remote", "test"]]:
    at = page.find(f".It Em {command[-1]}\n")
    if at < 0:
        fail(f"no entry for {' '.join(command)}")
    nxt = page.find("\n.It Em ", at + 1)
    page = add_defaults(page, at, nxt if nxt > 0 else len(page), command)

page = re.sub(r"^$", ".Pp", page, flags=re.M)
page = re.sub(r"^'", r"\\&'", page, flags=re.M)
start = page.find('.Sh "EXIT STATUS"')
end = page.find(".Sh AUTHORS")
if start < 0 or end < start:
    fail("no EXIT STATUS section before AUTHORS")
page = page[:start] + ".Sh EXAMPLES\n" + literal(top_examples) + extra + page[end:]
open(output, "w", encoding="utf-8").write(page)
