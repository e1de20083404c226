"""Reads an SVG plot written by weft (--plot) with Python's expat-based
parser and prints what it draws, for the shell tests to compare:

    series NAME: N points        (one line per <g class="series">)
    bound NAME                   (a <g class="series bound">, no points)
    legend: NAME | NAME | ...
    x ticks: 1K 4K ...

Exits 1 with the parser's message when the file is not well-formed XML or
not an SVG document.
"""
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def main(path):
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        print("svg_check: %s: %s" % (path, e), file=sys.stderr)
        return 1
    if root.tag != NS + "svg":
        print("svg_check: %s: root element %s" % (path, root.tag), file=sys.stderr)
        return 1
    for g in root.iter(NS + "g"):
        cls = g.get("class", "")
        if cls == "series bound":
            print("bound %s" % g.get("data-name"))
        elif cls == "series":
            pts = len(g.findall(NS + "circle"))
            lines = len(g.findall(NS + "polyline"))
            print("series %s: %d points%s" % (g.get("data-name"), pts,
                                              "" if lines == 1 else ", %d polylines" % lines))
        elif cls == "legend":
            print("legend: " + " | ".join(t.text for t in g.findall(NS + "text")))
        elif cls == "ticks":
            xs = [t.text for t in g.findall(NS + "text") if t.get("text-anchor") == "middle"]
            print("x ticks: " + " ".join(xs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
