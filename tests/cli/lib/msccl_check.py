#!/usr/bin/env python3
"""Checks an MSCCL XML program against the rules the MSCCL and RCCL
executors load it by, independently of weft's importer:

  msccl_check.py FILE.xml [MAX_STEPS]      (MAX_STEPS: 64, the executor's)

- <algo> has name, proto, nchannels (1..32), nchunksperloop, ngpus, coll
  and inplace (outofplace, minBytes and maxBytes are optional); exactly
  ngpus <gpu>, ids 0..n-1;
- every <gpu> has i_chunks, o_chunks, s_chunks; an alltoall's input and
  output hold nchunksperloop chunks;
- every <tb> has id (0, 1, ... per gpu), send and recv (-1 or another gpu)
  and chan < nchannels; at most 32 threadblocks per gpu and channel (the
  executor's parser counts the threadblocks with a send peer and those with
  a receive peer per channel, nSendPeers and nRecvPeers, each up to
  MSCCL_MAX_NUM_THREAD_BLOCKS_PER_CHANNEL = 32; this checker holds all
  threadblocks of a channel to 32, which implies both); no two
  threadblocks of a gpu send to (receive from) one peer on one channel;
- every <step> has s (0, 1, ... per threadblock, at most MAX_STEPS), a known
  type, srcbuf/dstbuf among i, o, s with the ranges it reads and writes
  inside the gpu's chunk counts, 1 <= cnt < 72 (0 for nop; msccl-executor's
  parser refuses a count of MSCCL_MAX_COUNT, 72, or more: "count (%d) must
  be positive and less than %d" in src/misc/msccl/msccl_parser.cc), a
  sending type only
  where send != -1 and a receiving one only where recv != -1; depid/deps
  -1/-1 or an existing step of another threadblock of the same gpu;
  hasdep 1 exactly on the steps some step waits for;
- on every connection (sender, receiver, channel) the k-th send and the
  k-th receive move the same cnt, and there are as many of each.

Prints "ok: G gpus, T threadblocks, S steps, C chunks per loop" or the first
violation, and exits 0 or 1. It does not prove the program correct (weft
verify does); it proves an executor would load it.
"""
import sys
import xml.etree.ElementTree as ET

SENDS = {"s", "rcs", "rrs", "rrcs"}
RECVS = {"r", "rcs", "rrs", "rrc", "rrcs"}
TYPES = SENDS | RECVS | {"cpy", "re", "nop"}
# Which buffers a step type reads (src) and writes (dst).
READS_SRC = {"s", "rrs", "rrc", "rrcs", "cpy", "re"}
WRITES_DST = {"r", "rcs", "rrc", "rrcs", "cpy", "re"}


def fail(msg):
    print("msccl_check: " + msg)
    sys.exit(1)


def num(el, attr, where):
    v = el.get(attr)
    if v is None:
        fail("%s has no %s" % (where, attr))
    try:
        return int(v)
    except ValueError:
        fail("%s: %s=%r is not an integer" % (where, attr, v))


def main():
    path = sys.argv[1]
    max_steps = int(sys.argv[2]) if len(sys.argv) > 2 else 64
    root = ET.parse(path).getroot()
    if root.tag != "algo":
        fail("the root element is <%s>, not <algo>" % root.tag)
    for a in ("name", "proto", "coll", "nchannels", "nchunksperloop", "ngpus", "inplace"):
        if root.get(a) is None:
            fail("<algo> has no %s" % a)
    nch = num(root, "nchannels", "<algo>")
    loop = num(root, "nchunksperloop", "<algo>")
    ngpus = num(root, "ngpus", "<algo>")
    if not 1 <= nch <= 32:
        fail("nchannels %d is not 1..32" % nch)
    gpus = root.findall("gpu")
    if sorted(num(g, "id", "<gpu>") for g in gpus) != list(range(ngpus)):
        fail("the gpu ids are not 0..%d" % (ngpus - 1))
    sends, recvs = {}, {}  # (sender, receiver, chan) -> [cnt, ...] in step order
    n_tb = n_steps = 0
    for g in gpus:
        gid = num(g, "id", "<gpu>")
        size = {b: num(g, b + "_chunks", "gpu %d" % gid) for b in ("i", "o", "s")}
        if root.get("coll") == "alltoall" and (size["i"] != loop or size["o"] != loop):
            fail("gpu %d: i_chunks %d and o_chunks %d, nchunksperloop %d" %
                 (gid, size["i"], size["o"], loop))
        tbs = {}
        per_chan, peers = {}, set()
        for tb in g.findall("tb"):
            where = "gpu %d tb %s" % (gid, tb.get("id"))
            tid = num(tb, "id", where)
            snd, rcv, ch = num(tb, "send", where), num(tb, "recv", where), num(tb, "chan", where)
            if tid in tbs:
                fail(where + ": id twice")
            if not 0 <= ch < nch:
                fail("%s: chan %d outside nchannels %d" % (where, ch, nch))
            for kind, peer in (("send", snd), ("recv", rcv)):
                if peer != -1 and (not 0 <= peer < ngpus or peer == gid):
                    fail("%s: %s=%d is not another gpu" % (where, kind, peer))
                if peer != -1:
                    if (kind, peer, ch) in peers:
                        fail("%s: a second threadblock with %s=%d on channel %d" %
                             (where, kind, peer, ch))
                    peers.add((kind, peer, ch))
            per_chan[ch] = per_chan.get(ch, 0) + 1
            if per_chan[ch] > 32:
                fail("gpu %d: more than 32 threadblocks on channel %d" % (gid, ch))
            steps = tb.findall("step")
            if len(steps) > max_steps:
                fail("%s: %d steps, more than %d" % (where, len(steps), max_steps))
            tbs[tid] = (snd, rcv, ch, steps)
        if sorted(tbs) != list(range(len(tbs))):
            fail("gpu %d: threadblock ids are not 0, 1, ..." % gid)
        waited = set()
        for tid, (snd, rcv, ch, steps) in tbs.items():
            for k, st in enumerate(steps):
                where = "gpu %d tb %d step %d" % (gid, tid, k)
                if num(st, "s", where) != k:
                    fail(where + ": steps are not numbered 0, 1, ...")
                ty = st.get("type")
                if ty not in TYPES:
                    fail("%s: unknown type %r" % (where, ty))
                cnt = num(st, "cnt", where)
                if (cnt < 1) != (ty == "nop"):
                    fail("%s: cnt %d for a %s step" % (where, cnt, ty))
                if cnt >= 72:
                    fail("%s: cnt %d, not below MSCCL_MAX_COUNT (72)" % (where, cnt))
                if ty in SENDS and snd == -1:
                    fail("%s: %s step in a threadblock with send=-1" % (where, ty))
                if ty in RECVS and rcv == -1:
                    fail("%s: %s step in a threadblock with recv=-1" % (where, ty))
                for side, used in (("src", ty in READS_SRC), ("dst", ty in WRITES_DST)):
                    buf, off = st.get(side + "buf"), num(st, side + "off", where)
                    if not used:
                        continue
                    if buf not in size:
                        fail("%s: %sbuf %r" % (where, side, buf))
                    if off < 0 or off + cnt > size[buf]:
                        fail("%s: %s %s[%d..%d) outside its %d chunks" %
                             (where, side, buf, off, off + cnt, size[buf]))
                depid, deps = num(st, "depid", where), num(st, "deps", where)
                if depid != -1:
                    if depid == tid or depid not in tbs or not 0 <= deps < len(tbs[depid][3]):
                        fail("%s: waits for tb %d step %d, which does not exist" %
                             (where, depid, deps))
                    waited.add((depid, deps))
                elif deps != -1:
                    fail("%s: depid -1 with deps %d" % (where, deps))
                if ty in SENDS:
                    sends.setdefault((gid, snd, ch), []).append(cnt)
                if ty in RECVS:
                    recvs.setdefault((rcv, gid, ch), []).append(cnt)
                n_steps += 1
        for tid, (_, _, _, steps) in tbs.items():
            for k, st in enumerate(steps):
                if (num(st, "hasdep", "step") == 1) != ((tid, k) in waited):
                    fail("gpu %d tb %d step %d: hasdep %s, but %s waits for it" %
                         (gid, tid, k, st.get("hasdep"),
                          "a step" if (tid, k) in waited else "no step"))
        n_tb += len(tbs)
    for conn in set(sends) | set(recvs):
        if sends.get(conn, []) != recvs.get(conn, []):
            fail("connection %d -> %d channel %d: sends %s, receives %s" %
                 (conn + (sends.get(conn, []), recvs.get(conn, []))))
    print("ok: %d gpus, %d threadblocks, %d steps, %d chunks per loop" %
          (ngpus, n_tb, n_steps, loop))


if __name__ == "__main__":
    main()
