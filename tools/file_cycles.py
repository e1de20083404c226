#!/usr/bin/env python3
"""Dependency cycles between the files of one module.

Usage: tools/file_cycles.py SOURCE_DIR MODULE [-v]

A file A depends on a file B (both .c files of src/MODULE, tests and
test helpers left out) when A names a function or a const table that B
defines without `static`: what A needs from B's header is B's code. Using
only a header's types is not a dependency (a struct or a typedef has no
place in the order). The files of a module are in a clear order when this
graph has no cycle; each cycle found is printed as `cycle: FILE ...`, with
-v the names behind each edge. Exits 1 when there is a cycle.

A regular-expression reader, not a C parser: definitions are found at the
start of a line (`type name(...) {` and `const type name =`), and comments
are dropped first. That is enough for weft's one-definition-per-line
style; a definition it misses can hide an edge, never invent one.
"""
import os
import re
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    root, mod, verbose = sys.argv[1], sys.argv[2], '-v' in sys.argv[3:]
    src = os.path.join(root, 'src')
    files = []
    for d, _, names in os.walk(os.path.join(src, mod)):
        for n in names:
            if n.endswith('.c') and not n.endswith('_test.c') and not n.startswith('testing'):
                files.append(os.path.relpath(os.path.join(d, n), src)[:-2])
    files.sort()
    text = {}
    for f in files:
        with open(os.path.join(src, f + '.c')) as fh:
            text[f] = re.sub(r'/\*.*?\*/', ' ', fh.read(), flags=re.S)
    owner = {}
    for f in files:
        for m in re.finditer(r'^(?!static\b)[A-Za-z_][\w \*]*?\b(\w+)\s*\([^;{]*?\)\s*\{',
                             text[f], re.M | re.S):
            owner[m.group(1)] = f
        for m in re.finditer(r'^(?!static\b)const\s+\w+\s+(\w+)\s*=', text[f], re.M):
            owner[m.group(1)] = f
    edges = {f: {} for f in files}
    for f in files:
        for name in set(re.findall(r'\b(\w+)\b', text[f])):
            g = owner.get(name)
            if g and g != f:
                edges[f].setdefault(g, set()).add(name)
    # Tarjan's strongly connected components, iteratively.
    index, low, on, stack, comps, counter = {}, {}, set(), [], [], [0]
    for root_f in files:
        if root_f in index:
            continue
        work = [(root_f, iter(sorted(edges[root_f])))]
        index[root_f] = low[root_f] = counter[0]
        counter[0] += 1
        stack.append(root_f)
        on.add(root_f)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    comps.append(sorted(comp))
    for comp in sorted(comps):
        print('cycle:', ' '.join(comp))
        if verbose:
            for a in comp:
                for b in sorted(edges[a]):
                    if b in comp:
                        print('   %s -> %s: %s' % (a, b, ' '.join(sorted(edges[a][b]))))
    if not comps:
        print('no cycle in %s (%d files)' % (mod, len(files)))
    return 1 if comps else 0


if __name__ == '__main__':
    sys.exit(main())
