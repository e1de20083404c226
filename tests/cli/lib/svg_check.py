"""Reads an SVG plot written by weft (--plot) with Python's expat-based
parser and prints what it draws, for the shell tests to compare:

    series NAME: N points        (one line per <g class="series">)
    bound NAME                   (a <g class="series bound">, no points)
    legend: NAME | NAME | ...
    x ticks: 1K 4K ...

Exits 1 with the parser's message when the file is not well-formed XML or
not an SVG document, and with the reason when the picture cannot be read:
two series drawn with the same stroke (colour and dash pattern), a bound
drawn like the frame or on its edge (within 3 units of it, or outside it),
or a bound without its label inside the plot area.
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
    problems = readable(root)
    for p in problems:
        print("svg_check: %s: %s" % (path, p), file=sys.stderr)
    if problems:
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


def readable(root):
    """What would make the picture ambiguous, as a list of messages."""
    problems = []
    frame = next((r for r in root.iter(NS + "rect")
                  if r.get("class") == "frame" or r.get("fill") == "none"), None)
    if frame is None:
        return ["no frame (<rect class=\"frame\">)"]
    fx, fy = float(frame.get("x")), float(frame.get("y"))
    fw, fh = float(frame.get("width")), float(frame.get("height"))
    frame_style = (frame.get("stroke"), frame.get("stroke-dasharray"))
    seen = {}
    for g in root.iter(NS + "g"):
        cls = g.get("class", "")
        if cls not in ("series", "series bound"):
            continue
        name = g.get("data-name")
        line = g.find(NS + "polyline")
        st = (line.get("stroke"), line.get("stroke-dasharray"))
        if st in seen:
            problems.append("series %s and %s share the stroke %s" % (seen[st], name, st))
        seen[st] = name
        if cls != "series bound":
            continue
        if st == frame_style:
            problems.append("bound %s is drawn like the frame %s" % (name, st))
        for pt in line.get("points").split():
            x, y = (float(v) for v in pt.split(","))
            if not (fy + 3 <= y <= fy + fh - 3 and fx <= x <= fx + fw):
                problems.append("bound %s point %s is on or outside the frame" % (name, pt))
                break
        label = g.find(NS + "text")
        if label is None or label.text != name:
            problems.append("bound %s has no label" % name)
        elif not (fx <= float(label.get("x")) <= fx + fw and
                  fy <= float(label.get("y")) <= fy + fh):
            problems.append("bound %s: label outside the plot area" % name)
    return problems


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
