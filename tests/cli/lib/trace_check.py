"""Checks a Chrome trace written by `weft sim --trace` (docs/sim.md).

Usage: python3 trace_check.py [--nest-only] TRACE.json

--nest-only checks a trace of another command (weft step, weft step
--chakra): the file, nesting, async pairs and named tracks, not the names
of processes and slices; it prints one line with the slices and the
tracks, then "ok".

Asserts what Perfetto needs to draw every slice, and weft's naming:
- the file is one JSON object with a traceEvents list;
- on every track (pid, tid) the complete events ("ph":"X") nest properly:
  each one either ends before the next begins or contains it (times are
  compared as exact decimals, as weft writes them);
- async begin/end events ("b"/"e") pair up per (pid, cat, id) and never end
  before they begin;
- one track per rank (its process has one thread, "sends") and one per
  link (the links process has one thread per link, each name once); a
  rank's process may also have compute threads ("compute", "compute 2",
  ...) whose slices are the compute ops the run charged (weft sim
  --compute): named after the kind (hash, compress, decompress,
  aggregate, fill), args op, rank (the process's), bytes, seconds (exactly
  bytes x s_per_b as doubles), s_per_b and source, lasting seconds to
  within the 1 ps of rounding;
- every slice is one transfer alone, named "KIND S→D chunk C", "KIND S→D
  chunks C-E" or "nop R", its args (op, kind, src, dst, chunk, count,
  slice, slices, bytes) saying the same, or a segment "K transfers" (K >=
  2 in flight at once) whose args give transfers K, bytes, ops (the first
  min(K, 8), each "op N: NAME" or "op N slice I: NAME") and more (the
  rest); on a rank's track every transfer is the rank's own;
- every pid and every track that has slices is named by metadata.

Prints one line per run of the sweep: its label, the events on rank tracks
(sends) and on link tracks, the tracks, and the most transfers in flight at
once on one track, and for a run with compute slices a line "LABEL:
compute" with their count per kind (by name); then "ok". Exits 1 with every problem on stderr otherwise.
"""
import json
import re
import sys
from collections import defaultdict
from decimal import Decimal

NAME = re.compile(r"^(copy|reduce) (\d+)\u2192(\d+) chunks? (\d+)(?:-(\d+))?$")
NOP = re.compile(r"^nop (\d+)$")
PROC = re.compile(r"^(?:(.+): )?(rank (\d+)|links)$")
SEGMENT = re.compile(r"^(\d+) transfers$")
ITEM = re.compile(r"^op (\d+)(?: slice (\d+))?: (.*)$")
COMPUTE_THREAD = re.compile(r"^compute(?: [2-9]| [1-9]\d+)?$")
KINDS = ("hash", "compress", "decompress", "aggregate", "fill")


def main(path, nest_only=False):
    problems = []

    def bad(msg):
        if len(problems) < 20:
            problems.append(msg)

    with open(path, encoding="utf-8") as f:
        doc = json.load(f, parse_float=Decimal)
    events = doc["traceEvents"]
    proc_name, thread_name = {}, {}
    tracks = defaultdict(list)
    asyncs = defaultdict(list)
    for ev in events:
        ph = ev["ph"]
        if ph == "M":
            if ev["name"] == "process_name":
                proc_name[ev["pid"]] = ev["args"]["name"]
            elif ev["name"] == "thread_name":
                thread_name[(ev["pid"], ev["tid"])] = ev["args"]["name"]
        elif ph == "X":
            tracks[(ev["pid"], ev["tid"])].append(ev)
        elif ph in ("b", "e"):
            asyncs[(ev["pid"], ev.get("cat"), ev["id"])].append(ev)
        else:
            bad("unexpected phase %r: %r" % (ph, ev))

    for key, evs in asyncs.items():
        depth, last = 0, None
        for ev in sorted(evs, key=lambda e: (Decimal(e["ts"]), e["ph"] == "b")):
            depth += 1 if ev["ph"] == "b" else -1
            if depth < 0:
                bad("async %r ends before it begins at ts %s" % (key, ev["ts"]))
        if depth != 0:
            bad("async %r: %d begin events without an end" % (key, depth))

    runs = {}
    for (pid, tid), evs in sorted(tracks.items()):
        if pid not in proc_name:
            bad("pid %d has slices but no process_name" % pid)
            continue
        if (pid, tid) not in thread_name:
            bad("track (%d, %d) has slices but no thread_name" % (pid, tid))
        m = PROC.match(proc_name[pid]) if not nest_only else None
        if nest_only:
            m = re.match(r"^()(.*)$", "")
        if not m:
            bad("process name %r" % proc_name[pid])
            continue
        label, is_link = m.group(1) or "", not nest_only and m.group(2) == "links"
        run = runs.setdefault(label, {"rank": 0, "link": 0, "tracks": 0, "most": 0,
                                      "names": defaultdict(list),
                                      "compute": defaultdict(int)})
        tname = thread_name.get((pid, tid), "")
        is_compute = not nest_only and not is_link and COMPUTE_THREAD.match(tname)
        if not is_compute:
            run["rank" if not is_link else "link"] += len(evs)
        run["tracks"] += 1
        run["names"][pid].append(tname)
        stack = []
        for ev in sorted(evs, key=lambda e: (e["ts"], -e["dur"])):
            ts, dur = ev["ts"], ev["dur"]
            if dur < 0:
                bad("negative duration: %r" % ev)
            end = ts + dur
            while stack and stack[-1] <= ts:
                stack.pop()
            if stack and end > stack[-1]:
                bad("track %r (%s / %s): slice [%s, %s] %r overlaps one ending at %s"
                    % ((pid, tid), proc_name[pid], tname, ts, end, ev["name"], stack[-1]))
            stack.append(end)
            if is_compute:
                check_compute(ev, bad, int(m.group(3)))
                run["compute"][ev["name"]] += 1
            elif not nest_only:
                k = check_name(ev, bad, None if is_link else int(m.group(3)))
                run["most"] = max(run["most"], k)

    for label, run in runs.items():
        for pid, names in run["names"].items():
            if nest_only:
                continue
            if PROC.match(proc_name[pid]).group(2) == "links":
                dup = sorted(n for n in set(names) if names.count(n) > 1)
                if dup:
                    bad("%s: a link on several tracks: %s" % (proc_name[pid], dup[0]))
            else:
                sends = [n for n in names if not COMPUTE_THREAD.match(n)]
                if len(sends) != 1 and (sends or len(names) == 0):
                    bad("%s: %d tracks, expected one" % (proc_name[pid], len(sends)))
    if problems:
        for p in problems:
            print("trace_check: %s: %s" % (path, p), file=sys.stderr)
        return 1
    if nest_only:
        print("%d slices on %d tracks" % (sum(r["rank"] for r in runs.values()),
                                          sum(r["tracks"] for r in runs.values())))
        print("ok")
        return 0
    for label, run in runs.items():
        print("%s: %d rank events, %d link events, %d tracks, at most %d in flight"
              % (label or "-", run["rank"], run["link"], run["tracks"], run["most"]))
        if run["compute"]:
            print("%s: compute %s" % (label or "-", ", ".join(
                "%s %d" % (k, n) for k, n in sorted(run["compute"].items()))))
    print("ok")
    return 0


def check_name(ev, bad, rank):
    """Checks one slice; returns the transfers it stands for."""
    seg = SEGMENT.match(ev["name"])
    if seg:
        a, k = ev["args"], int(seg.group(1))
        ops = a.get("ops", [])
        if k < 2 or a.get("transfers") != k or len(ops) != min(k, 8) or \
                a.get("more") != k - len(ops) or "bytes" not in a:
            bad("segment %r: args %r" % (ev["name"], a))
        for item in ops:
            im = ITEM.match(item)
            nm = im and (NAME.match(im.group(3)) or NOP.match(im.group(3)))
            if not nm:
                bad("segment %r: op %r is not 'op N: NAME'" % (ev["name"], item))
            elif rank is not None and NAME.match(im.group(3)) and int(nm.group(2)) != rank:
                bad("%r in a segment on the track of rank %d" % (item, rank))
        return k
    check_one(ev, bad, rank)
    return 1


def check_compute(ev, bad, rank):
    """Checks one compute slice on a compute thread of rank's process."""
    name, a = ev["name"], ev["args"]
    for k in ("op", "rank", "bytes", "seconds", "s_per_b", "source"):
        if k not in a:
            bad("compute %r: no %s in args" % (name, k))
            return
    if name not in KINDS or ev.get("cat") != "compute":
        bad("compute slice %r (cat %r) is not one of %s" % (name, ev.get("cat"), KINDS))
    if a["rank"] != rank:
        bad("compute %r of rank %d on the track of rank %d" % (name, a["rank"], rank))
    if float(a["bytes"]) * float(a["s_per_b"]) != float(a["seconds"]):
        bad("compute %r: seconds %s is not bytes %s x s_per_b %s"
            % (name, a["seconds"], a["bytes"], a["s_per_b"]))
    if abs(ev["dur"] * 10**6 - a["seconds"] * 10**12) > 1:
        bad("compute %r: dur %s us is not its seconds %s" % (name, ev["dur"], a["seconds"]))


def check_one(ev, bad, rank):
    name, a = ev["name"], ev["args"]
    for k in ("op", "kind", "src", "dst", "chunk", "count", "slice", "slices", "bytes"):
        if k not in a:
            bad("%r: no %s in args" % (name, k))
            return
    m = NAME.match(name)
    if m:
        kind, src, dst, first = m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4))
        last = int(m.group(5)) if m.group(5) else first
        if (kind, src, dst, first, last - first + 1) != (
                a["kind"], a["src"], a["dst"], a["chunk"], a["count"]) or \
                (a["count"] == 1) != (m.group(5) is None):
            bad("name %r does not match its args %r" % (name, a))
    elif NOP.match(name):
        if a["kind"] != "nop" or int(NOP.match(name).group(1)) != a["src"]:
            bad("name %r does not match its args %r" % (name, a))
    else:
        bad("slice name %r is not 'KIND S\u2192D chunk C' or 'nop R'" % name)
        return
    if rank is not None and a["src"] != rank:
        bad("%r on the track of rank %d" % (name, rank))
    if not 0 <= a["slice"] < a["slices"]:
        bad("%r: slice %d of %d" % (name, a["slice"], a["slices"]))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--nest-only":
        sys.exit(main(sys.argv[2], nest_only=True))
    sys.exit(main(sys.argv[1]))
