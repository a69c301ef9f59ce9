// Package flamegraph draws the stack aggregations of a program as an
// interactive SVG flame graph: one box per frame, roots at the bottom,
// widths proportional to the aggregation's value; hovering a box shows its
// frame, value and share (its title), clicking one zooms to it (clicking
// the root resets), and the Search button highlights the frames that
// contain a string and shows their share; the URL's query can zoom
// (?z=NAME) and search (?s=TEXT) too. The script is our own and embedded
// in the SVG, which also reads as a static picture.
package flamegraph

import (
	"fmt"
	"hash/fnv"
	"html"
	"io"
	"sort"
	"strings"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/format"
	"github.com/dtrace-go/dtrace/output"
)

// node is one frame in the tree of merged stacks.
type node struct {
	name     string
	value    int64
	children map[string]*node
	order    []string
}

func (n *node) child(name string) *node {
	c := n.children[name]
	if c == nil {
		if n.children == nil {
			n.children = map[string]*node{}
		}
		c = &node{name: name}
		n.children[name] = c
		n.order = append(n.order, name)
	}
	return c
}

// Tree merges the stack aggregations of aggs into one tree under a root
// named "all"; with several, each aggregation's stacks go under a frame
// of its name. Values below zero count as zero.
func tree(aggs []*aggregate.Agg, sym format.Symbolizer, o aggregate.SortOptions) *node {
	root := &node{name: "all"}
	var stackAggs []*aggregate.Agg
	for _, a := range aggs {
		if a != nil && output.HasStack(a) {
			stackAggs = append(stackAggs, a)
		}
	}
	for _, a := range stackAggs {
		top := root
		if len(stackAggs) > 1 {
			name := a.Desc.Name
			if name == "" {
				name = "@"
			}
			top = root.child(name)
		}
		for _, s := range output.Fold(a, sym, o) {
			v := max(s.Value, 0)
			n := top
			if n != root {
				n.value += v
			}
			for _, f := range s.Frames {
				n = n.child(f)
				n.value += v
			}
			root.value += v
		}
	}
	return root
}

// Geometry of the drawing.
const (
	width      = 1200.0
	frameH     = 16
	padTop     = 40
	padBottom  = 24
	padSide    = 10
	fontSize   = 12
	charWidth  = 0.59 * fontSize
	minWidthPx = 0.1
)

// Write draws the flame graph of aggs' stack aggregations to w, titled
// title. With none it draws an empty graph saying so.
func Write(w io.Writer, aggs []*aggregate.Agg, sym format.Symbolizer, o aggregate.SortOptions, title string) error {
	root := tree(aggs, sym, o)
	depth := maxDepth(root)
	height := padTop + padBottom + frameH*(depth+1)
	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0" standalone="no"?>
<svg version="1.1" width="%d" height="%d" viewBox="0 0 %d %d" xmlns="http://www.w3.org/2000/svg" onload="init(evt)">
<style>
text { font-family: monospace; font-size: %dpx; fill: #000; }
.f:hover rect { stroke: #000; stroke-width: 0.5; cursor: pointer; }
#title { font-size: 16px; text-anchor: middle; }
#search, #reset { cursor: pointer; }
</style>
`, int(width), height, int(width), height, fontSize)
	fmt.Fprintf(&b, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#f8f8f0\"/>\n", int(width), height)
	fmt.Fprintf(&b, "<text id=\"title\" x=\"%g\" y=\"20\">%s</text>\n", width/2, html.EscapeString(title))
	fmt.Fprintf(&b, "<text id=\"reset\" x=\"%d\" y=\"20\" visibility=\"hidden\">Reset Zoom</text>\n", padSide)
	fmt.Fprintf(&b, "<text id=\"search\" x=\"%g\" y=\"20\" text-anchor=\"end\">Search</text>\n", width-padSide)
	fmt.Fprintf(&b, "<text id=\"matched\" x=\"%g\" y=\"%d\" text-anchor=\"end\"></text>\n", width-padSide, height-6)
	fmt.Fprintf(&b, "<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n", padSide, height-6)
	b.WriteString("<g id=\"frames\">\n")
	if root.value == 0 {
		fmt.Fprintf(&b, "<text x=\"%g\" y=\"%d\" text-anchor=\"middle\">no stack aggregation data</text>\n", width/2, height/2)
	} else {
		draw(&b, root, 0, 0, root.value, height)
	}
	b.WriteString("</g>\n<script type=\"text/ecmascript\"><![CDATA[\n")
	b.WriteString(script)
	b.WriteString("]]></script>\n</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func maxDepth(n *node) int {
	d := 0
	for _, c := range n.children {
		d = max(d, 1+maxDepth(c))
	}
	return d
}

// draw writes n's box and its children's: x is n's start in value units,
// total the root's value.
func draw(b *strings.Builder, n *node, depth int, x, total int64, height int) {
	scale := (width - 2*padSide) / float64(total)
	px, pw := padSide+float64(x)*scale, float64(n.value)*scale
	if pw < minWidthPx {
		return
	}
	y := height - padBottom - frameH*(depth+1)
	pct := 100 * float64(n.value) / float64(total)
	name := html.EscapeString(n.name)
	fmt.Fprintf(b, "<g class=\"f\" data-x=\"%d\" data-w=\"%d\" data-d=\"%d\" data-n=\"%s\">", x, n.value, depth, name)
	fmt.Fprintf(b, "<title>%s (%d, %.2f%%)</title>", name, n.value, pct)
	fmt.Fprintf(b, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\" rx=\"2\"/>", px, y, pw, frameH-1, color(n.name))
	fmt.Fprintf(b, "<text x=\"%.2f\" y=\"%d\">%s</text></g>\n", px+3, y+frameH-4, html.EscapeString(fit(n.name, pw)))
	// Children sorted by name, as flame graphs are (the x axis is not
	// time).
	names := append([]string(nil), n.order...)
	sort.Strings(names)
	for _, cn := range names {
		c := n.children[cn]
		draw(b, c, depth+1, x, total, height)
		x += c.value
	}
}

// fit cuts a frame's name to what fits in a box of w pixels.
func fit(s string, w float64) string {
	n := int((w - 6) / charWidth)
	switch {
	case n < 3:
		return ""
	case len(s) <= n:
		return s
	}
	return s[:n-2] + ".."
}

// color picks a warm color from the frame's name, stable across runs.
func color(name string) string {
	h := fnv.New32a()
	h.Write([]byte(name))
	v := h.Sum32()
	r := 205 + v%50
	g := (v >> 8) % 230
	bl := (v >> 16) % 55
	return fmt.Sprintf("rgb(%d,%d,%d)", r, g, bl)
}

// script zooms, resets, searches and shows details; frames carry their
// start (data-x), width (data-w) and depth (data-d) in value units.
const script = `var svg, frames, details, W = 1200, PAD = 10, CW = 0.59 * 12, zoomed = null;
function init(evt) {
	svg = document.documentElement;
	frames = Array.prototype.slice.call(document.querySelectorAll("g.f"));
	details = document.getElementById("details");
	frames.forEach(function (g) {
		g.addEventListener("click", function () { zoom(g); });
		g.addEventListener("mouseover", function () { details.textContent = g.querySelector("title").textContent; });
		g.addEventListener("mouseout", function () { details.textContent = " "; });
	});
	document.getElementById("reset").addEventListener("click", function () { zoom(frames[0]); });
	document.getElementById("search").addEventListener("click", function () {
		var s = prompt("Search for frames containing:", "");
		if (s !== null) search(s);
	});
	// As flamegraph.pl's, the URL can zoom (?z=NAME: the first frame
	// whose name contains NAME) and search (?s=TEXT).
	var q = new URLSearchParams(window.location.search), z = q.get("z"), s = q.get("s");
	if (z) {
		var hit = frames.filter(function (g) { return g.getAttribute("data-n").indexOf(z) >= 0; });
		if (hit.length > 0) zoom(hit[0]);
	}
	if (s !== null) search(s);
	svg.setAttribute("data-ready", String(frames.length));
}
function num(g, k) { return Number(g.getAttribute("data-" + k)); }
function place(g, x, w) {
	var r = g.querySelector("rect"), t = g.querySelector("text"), name = g.getAttribute("data-n");
	r.setAttribute("x", x); r.setAttribute("width", w); t.setAttribute("x", x + 3);
	var n = Math.floor((w - 6) / CW);
	t.textContent = n < 3 ? "" : (name.length <= n ? name : name.substring(0, n - 2) + "..");
}
function zoom(z) {
	var zx = num(z, "x"), zw = num(z, "w"), zd = num(z, "d"), scale = (W - 2 * PAD) / zw;
	frames.forEach(function (g) {
		var x = num(g, "x"), w = num(g, "w"), d = num(g, "d");
		if (d < zd && x <= zx && x + w >= zx + zw) {
			g.style.display = ""; g.style.opacity = "0.5"; place(g, PAD, W - 2 * PAD);
		} else if (d >= zd && x >= zx && x + w <= zx + zw) {
			g.style.display = ""; g.style.opacity = ""; place(g, PAD + (x - zx) * scale, w * scale);
		} else {
			g.style.display = "none";
		}
	});
	zoomed = zd > 0 ? z : null;
	document.getElementById("reset").setAttribute("visibility", zoomed ? "visible" : "hidden");
}
function search(s) {
	var total = num(frames[0], "w"), spans = [];
	frames.forEach(function (g) {
		var hit = s !== "" && g.getAttribute("data-n").indexOf(s) >= 0, r = g.querySelector("rect");
		if (!r.hasAttribute("data-fill")) r.setAttribute("data-fill", r.getAttribute("fill"));
		r.setAttribute("fill", hit ? "rgb(230,0,230)" : r.getAttribute("data-fill"));
		if (hit) spans.push([num(g, "x"), num(g, "x") + num(g, "w")]);
	});
	// Nested matches count once: merge the spans.
	spans.sort(function (a, b) { return a[0] - b[0]; });
	var sum = 0, end = -Infinity;
	spans.forEach(function (sp) {
		if (sp[0] >= end) { sum += sp[1] - sp[0]; end = sp[1]; }
		else if (sp[1] > end) { sum += sp[1] - end; end = sp[1]; }
	});
	document.getElementById("matched").textContent = s === "" ? "" : "Matched: " + (100 * sum / total).toFixed(1) + "%";
	svg.setAttribute("data-matched", String(spans.length));
}
`
