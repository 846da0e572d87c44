#!/usr/bin/env python3
"""tests/layers.py: the include rules of the architecture page, checked on
every #include "..." of the tree's sources (ctest: layers).

The rules are read from the page itself (sim/doc/architecture.md, the table
between <!-- rules begin --> and <!-- rules end -->), so the page and the
check cannot drift apart. Each row names a room, its folder, the folder of
its public headers ("-": none) and what it may include: a room name means
that room's public headers, a name with a "+" also its <folder>/iface/
headers (what it offers the rooms above it inside sim). A room always sees
its own headers; a file belongs to the room with the longest folder prefix.

The build enforces most of this already (each room's include directories
are its own and those of the rooms it may see); this check adds what the
compiler would let through: a "../" path, a same-folder lookup, a file that
is in no room, and a circle between rooms (the rules themselves must form a
DAG). Exit 0 when every include keeps the rules; else one line per broken
include (file:line: reason) and exit 1.

usage: layers.py SOURCE_DIR
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def read_rules(page):
    text = open(page, encoding="utf-8").read()
    m = re.search(r"<!-- rules begin -->(.*?)<!-- rules end -->", text, re.S)
    if not m:
        sys.exit(f"{page}: no rules table (<!-- rules begin --> ... <!-- rules end -->)")
    rooms = {}
    for line in m.group(1).splitlines():
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or cells[0] in ("room", "") or set(cells[0]) <= set("-: "):
            continue
        if len(cells) < 4:
            sys.exit(f"{page}: rules row {line.strip()!r}: want room | folder | public | sees")
        name, folder, public, sees = cells[0], cells[1].rstrip("/"), cells[2].rstrip("/"), cells[3]
        seen = [s.strip().strip("`") for s in sees.split(",") if s.strip() and s.strip() != "-"]
        rooms[name] = {"folder": folder, "public": None if public == "-" else public,
                       "sees": seen}
    return rooms


def room_of(path, rooms):
    """The room whose folder is the longest prefix of path (None: no room)."""
    best = None
    for name, r in rooms.items():
        f = r["folder"] + "/"
        if path.startswith(f) and (best is None or len(f) > len(rooms[best]["folder"]) + 1):
            best = name
    return best


def exported(root, rooms):
    """spelling -> (room, kind) for every header reachable through an include
    directory: kind "public" (<folder>/include) or "iface" (<folder>/iface)."""
    out = {}
    for name, r in rooms.items():
        dirs = [(r["public"], "public")] if r["public"] else []
        dirs.append((r["folder"] + "/iface", "iface"))
        for sub, kind in dirs:
            d = os.path.join(root, sub)
            if not os.path.isdir(d):
                continue
            flat = sub == r["folder"]  # headers beside the sources: not below
            for dp, _, files in os.walk(d):
                if flat and dp != d:
                    continue
                for f in files:
                    if f.endswith((".h", ".def")):
                        rel = os.path.relpath(os.path.join(dp, f), d)
                        if rel in out and out[rel][0] != name:
                            sys.exit(f"layers: {rel} is offered by rooms {out[rel][0]} and {name}")
                        out[rel] = (name, kind)
    return out


def check_dag(rooms):
    errs, state = [], {}

    def visit(n, stack):
        state[n] = 1
        for s in rooms[n]["sees"]:
            t = s.rstrip("+")
            if t not in rooms:
                errs.append(f"rules: room {n} sees unknown room {t}")
                continue
            if state.get(t) == 1:
                errs.append("rules: circle " + " -> ".join(stack + [n, t]))
            elif not state.get(t):
                visit(t, stack + [n])
        state[n] = 2

    for n in rooms:
        if not state.get(n):
            visit(n, [])
    return errs


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    rooms = read_rules(os.path.join(root, "sim/doc/architecture.md"))
    errs = check_dag(rooms)
    spell = exported(root, rooms)
    checked = 0
    for top in ("sim", "policies", "devices", "traces"):
        for dp, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if not f.endswith((".c", ".h")):
                    continue
                path = os.path.relpath(os.path.join(dp, f), root)
                rf = room_of(path, rooms)
                if rf is None:
                    errs.append(f"{path}: in no room of the rules table")
                    continue
                allowed = {}
                for s in rooms[rf]["sees"]:
                    allowed[s.rstrip("+")] = {"public", "iface"} if s.endswith("+") else {"public"}
                for no, line in enumerate(open(os.path.join(root, path), encoding="utf-8",
                                               errors="replace"), 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    inc, checked = m.group(1), checked + 1
                    where = f"{path}:{no}: \"{inc}\""
                    if ".." in inc.split("/"):
                        errs.append(f"{where}: a relative path past the folder")
                        continue
                    same = os.path.join(root, os.path.dirname(path), inc)
                    if os.path.exists(same):
                        rt = room_of(os.path.relpath(same, root), rooms)
                        if rt != rf:
                            errs.append(f"{where}: same-folder lookup into room {rt}")
                        continue
                    if inc not in spell:
                        errs.append(f"{where}: not a header any room offers (private to its folder?)")
                        continue
                    rt, kind = spell[inc]
                    if rt == rf:
                        continue
                    if rt not in allowed:
                        errs.append(f"{where}: room {rf} may not include room {rt}")
                    elif kind not in allowed[rt]:
                        errs.append(f"{where}: room {rf} sees only the public headers of {rt}")
    for e in errs:
        print(e)
    print(f"layers: {len(rooms)} rooms, {checked} includes checked, {len(errs)} broken")
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
