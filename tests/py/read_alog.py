#!/usr/bin/env python3
"""An independent, strict reader of MOOS alog files, written from the
format notes (docs/alog.md), not from usim's code.

Usage: read_alog.py FILE.alog  -> JSON on stdout:
  {"t0": float, "header": [lines], "entries": [[t, var, source, "d"|"s", value], ...],
   "invalid": [line numbers]}
Exit status 2 if the file is not an alog (no `%% LOGSTART` in the first
five lines, or its t0 is not a number).
"""
import json
import re
import sys

# MOOS's isNumber: optional sign, digits with at most one '.', at least one
# digit, nothing else (no exponent).
NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)$")


def read(path):
    with open(path, "rb") as f:
        text = f.read().decode("utf-8")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    t0 = None
    for line in lines[:5]:
        tok = line.split()
        if len(tok) >= 3 and tok[0] == "%%" and tok[1] == "LOGSTART":
            t0 = float(tok[2])
            break
    if t0 is None:
        raise ValueError("no %% LOGSTART among the first five lines")
    header, entries, invalid = [], [], []
    for n, line in enumerate(lines, 1):
        if line.startswith("%"):
            header.append(line)
            continue
        m = re.match(r"^[ \t]*(\S+)[ \t]+(\S+)[ \t]+(\S+)[ \t]+(.*?)[ \t]*$", line)
        if not m or m.group(4) == "" or not NUMBER.match(m.group(1)):
            invalid.append(n)
            continue
        t, var, src, val = m.groups()
        if NUMBER.match(val):
            entries.append([float(t), var, src, "d", float(val)])
        else:
            entries.append([float(t), var, src, "s", val])
    return {"t0": t0, "header": header, "entries": entries, "invalid": invalid}


if __name__ == "__main__":
    try:
        out = read(sys.argv[1])
    except (ValueError, UnicodeDecodeError) as e:
        print(f"read_alog: {e}", file=sys.stderr)
        sys.exit(2)
    json.dump(out, sys.stdout)
