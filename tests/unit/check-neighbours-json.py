#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Check `domprof report --neighbours --format json` output against the
member list of doc/neighbours.md: every member it has is listed with that
type, every listed member that is not optional (`?`) is there.

usage: check-neighbours-json.py DOC JSON
"""
import json
import re
import sys

TYPES = {
    "string": str,
    "number": (int, float),
    "boolean": bool,
    "object": dict,
    "array": list,
}


def doc_members(path):
    text = open(path, encoding="utf-8").read()
    m = re.search(r"<!-- neighbours-json-members -->(.*)<!-- /neighbours-json-members -->", text,
                  re.S)
    if not m:
        sys.exit("no member list in " + path)
    members = {}
    for line in m.group(1).splitlines():
        lm = re.match(r"- `([^`]+)` ([a-z|]+)(\??):", line)
        if lm:
            members[lm.group(1)] = (lm.group(2).split("|"), lm.group(3) == "?")
    return members


def walk(value, path, seen, errors, members, check=True):
    if path and check:
        if path not in members:
            errors.append("member %s is not in the doc" % path)
            return
        types, _ = members[path]
        ok = (value is None and "null" in types) or any(
            t in TYPES and isinstance(value, TYPES[t]) and
            not (t == "number" and isinstance(value, bool)) for t in types)
        if not ok:
            errors.append("%s is %r, the doc says %s" % (path, value, "|".join(types)))
        seen.setdefault(path, 0)
        seen[path] += 1
    if isinstance(value, dict):
        for k, v in value.items():
            walk(v, path + "." + k if path else k, seen, errors, members)
        # members the doc requires of this object
        prefix = path + "." if path else ""
        for name, (_, optional) in members.items():
            if optional or not name.startswith(prefix):
                continue
            rest = name[len(prefix):]
            if "." in rest or "[" in rest:
                continue
            if rest not in value:
                errors.append("%s has no member %s" % (path or "the object", rest))
    elif isinstance(value, list):
        for v in value:
            walk(v, path + "[]", seen, errors, members, False)


def main():
    members = doc_members(sys.argv[1])
    data = json.load(open(sys.argv[2], encoding="utf-8"))
    errors, seen = [], {}
    walk(data, "", seen, errors, members)
    for e in errors:
        print(e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
