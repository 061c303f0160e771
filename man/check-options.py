#!/usr/bin/env python3
"""The options a command's --help prints against its man page, its source
and the README, so that none of them drifts from the others.

  check-options.py NAME HELP MAN [--source FILE.c]... [--readme README.md]

NAME is the command as the README heads it ("domprof record", "domprofd"),
HELP a file holding its --help output, MAN its man page (mdoc). Checked:
- every option --help lists is documented in the man page (an ".It Fl ..."
  line), and every option the man page documents is in --help (-h and --help
  may be documented when --help does not list them: it printed itself);
- every option a source file accepts (its getopt_long table and short-option
  string) is in --help, a short letter standing for a listed long option
  excepted;
- every option in the README's synopsis of NAME (the code blocks under its
  "### NAME" heading) is in --help.
Prints one line per difference; exits 1 when there is any.
"""
import argparse
import re
import sys

OPT = re.compile(r'(?:^|[\s,\[|(])(--?[A-Za-z][A-Za-z0-9-]*)')
SELF_DOCUMENTING = {"-h", "--help"}


def help_options(text):
    """Options of the lines that define them: lines indented by 1 to 8
    spaces whose first character after the indentation is '-' (deeper ones
    continue a description); only their option column (up to two spaces in
    a row), which may name several options ("--a X, --b Y")."""
    opts = set()
    for line in text.splitlines():
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if not 1 <= indent <= 8 or not stripped.startswith("-"):
            continue
        column = re.split(r"\s{2,}", stripped, maxsplit=1)[0]
        opts.update(OPT.findall(" " + column))
    return opts


def man_options(text):
    """Options the page documents: the Fl macros of its .It lines."""
    opts = set()
    for line in text.splitlines():
        if not line.startswith(".It "):
            continue
        words = line.split()
        for i, w in enumerate(words[:-1]):
            if w == "Fl":
                arg = words[i + 1].replace("\\", "")
                if re.fullmatch(r"-?[A-Za-z][A-Za-z0-9-]*", arg):
                    opts.add("-" + arg)
    return opts


def source_options(text):
    """The getopt_long table's long names, and the short-option string's
    letters, each with the long option it stands for (None: none)."""
    aliases = {}
    opts = {}
    for name, val in re.findall(
            r'\{\s*"([A-Za-z0-9-]+)"\s*,\s*(?:no|required|optional)_argument\s*,'
            r'\s*[^,]+,\s*([^}\s]+)\s*\}', text):
        opts["--" + name] = None
        if re.fullmatch(r"'[A-Za-z0-9]'", val):
            aliases[val[1]] = "--" + name
    for m in re.findall(r'getopt_long\s*\([^,]+,[^,]+,\s*"([^"]*)"', text):
        for c in m:
            if c.isalnum():
                opts["-" + c] = aliases.get(c)
    return opts


def readme_options(text, name):
    """Options in the code blocks of the README section headed "### NAME"."""
    m = re.search(r"^###\s+" + re.escape(name) + r"\s*$(.*?)(?=^##)", text + "\n##",
                  re.M | re.S)
    if not m:
        return None
    opts = set()
    for block in re.findall(r"^```[^\n]*\n(.*?)^```", m.group(1), re.M | re.S):
        for line in block.splitlines():
            opts.update(o for o in OPT.findall(" " + line))
    return opts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("name")
    ap.add_argument("help")
    ap.add_argument("man")
    ap.add_argument("--source", action="append", default=[])
    ap.add_argument("--readme")
    a = ap.parse_args()
    problems = []
    with open(a.help) as f:
        helped = help_options(f.read())
    try:
        with open(a.man) as f:
            documented = man_options(f.read())
    except FileNotFoundError:
        print(f"{a.name}: no man page {a.man}")
        return 1
    if not helped:
        problems.append(f"{a.name}: --help lists no option (is {a.help} its output?)")
    for o in sorted(helped - documented):
        problems.append(f"{a.name}: {o} is in --help but not in {a.man}")
    for o in sorted(documented - helped - SELF_DOCUMENTING):
        problems.append(f"{a.name}: {o} is in {a.man} but not in --help")
    for src in a.source:
        with open(src) as f:
            for o, alias in sorted(source_options(f.read()).items()):
                # A short letter for a long option --help lists is its alias.
                if o in helped or o in SELF_DOCUMENTING or alias in helped | SELF_DOCUMENTING:
                    continue
                problems.append(f"{a.name}: {o} is accepted by {src} but not in --help")
    if a.readme:
        with open(a.readme) as f:
            readme = readme_options(f.read(), a.name)
        if readme is not None:
            for o in sorted(readme - helped):
                problems.append(f"{a.name}: {o} is in the README's synopsis but not in --help")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
