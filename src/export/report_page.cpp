// The HTML report's page: a style sheet and a script that draw the report's data
// (report_html.cpp) with nothing from the network. The script builds the module tree's rows
// when a module is unfolded, and a graph's drawing when it is opened, so a model of 40,000
// modules and a graph of 40,000 nodes cost nothing until they are looked at. Text only ever
// goes in with textContent and setAttribute (Note [Text in the page] in report_html.cpp).
//
// What a test reads (the browser test in tests/browser/ relies on these):
//   #totals [data-total=K] dd      the total K (modules, traced, leaf, failed, unvisited, graphs,
//                                  nodes, parameters, macs) as the page shows it
//   #tree .item > .row             a module's row: data-module (its index), data-path;
//                                  .toggle unfolds it; .name .type .badge .nodes .params .macs
//   #expand-all                    unfolds every module (up to 20,000 rows)
//   #detail[data-module]           the module shown; .failure .failure-source (file:line),
//                                  .failure-kind .failure-op .failure-message, .snippet .hit
//   .graph-section[data-graph]     a graph: .open-graph draws it into svg.graph, whose g.node
//                                  are its nodes (g.node.link: a call_module node that opens
//                                  its module, data-link the module's index)
//   #search, #search-results .result[data-module]
#include "report_page.hpp"

namespace symtrace::detail {

const std::string_view report_page_head = R"page(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="symtrace">
)page";

const std::string_view report_page_style = R"page(<style>
:root { --traced: #2e7d32; --traced-bg: #e4f3e2; --leaf: #1f5fa8; --leaf-bg: #e1ecf8;
        --failed: #b3261e; --failed-bg: #fbe3e1; --unvisited: #616161; --unvisited-bg: #ececec;
        --line: #d7dbe0; --muted: #5f6670; --accent: #1f5fa8; }
* { box-sizing: border-box; }
html, body { margin: 0; height: 100%; }
body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #1d2025;
       display: flex; flex-direction: column; }
code, pre, .mono { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12.5px; }
header { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 24px; padding: 10px 16px;
         border-bottom: 1px solid var(--line); background: #f7f8fa; }
header h1 { margin: 0; font-size: 18px; }
header .subtitle { color: var(--muted); margin-left: 8px; font-size: 13px; }
#totals { display: flex; flex-wrap: wrap; gap: 4px 14px; margin: 0; }
#totals .total { display: flex; gap: 5px; align-items: baseline; }
#totals dt { color: var(--muted); font-size: 12px; }
#totals dd { margin: 0; font-weight: 600; }
#totals .total-traced dd { color: var(--traced); }
#totals .total-leaf dd { color: var(--leaf); }
#totals .total-failed dd { color: var(--failed); }
#totals .total-unvisited dd { color: var(--unvisited); }
.search { position: relative; margin-left: auto; }
#search { width: 320px; padding: 5px 8px; border: 1px solid var(--line); border-radius: 4px; font: inherit; }
#search-results { position: absolute; right: 0; top: 34px; z-index: 10; width: 460px; max-height: 60vh; overflow: auto;
                  margin: 0; padding: 4px 0; list-style: none; background: #fff; border: 1px solid var(--line);
                  border-radius: 4px; box-shadow: 0 4px 14px rgba(0, 0, 0, .12); }
#search-results li { padding: 0 4px; }
#search-results .note { padding: 4px 8px; color: var(--muted); }
.result { display: flex; gap: 8px; width: 100%; text-align: left; padding: 4px 8px; border: 0; background: none;
          font: inherit; cursor: pointer; border-radius: 3px; }
.result:hover, .result:focus { background: #eef3fb; outline: none; }
.result .type { color: var(--muted); }
main { flex: 1; display: flex; min-height: 0; }
#tree-pane { width: 42%; min-width: 320px; max-width: 720px; border-right: 1px solid var(--line); display: flex;
             flex-direction: column; min-height: 0; }
.tree-tools { display: flex; gap: 6px; padding: 6px 8px; border-bottom: 1px solid var(--line); }
#tree { overflow: auto; flex: 1; padding: 4px 0; }
.row { display: flex; align-items: center; gap: 6px; padding: 1px 8px 1px 4px; cursor: pointer; white-space: nowrap; }
.row:hover { background: #f1f4f8; }
.row.selected { background: #dce8f7; }
.row .name { font-weight: 600; overflow: hidden; text-overflow: ellipsis; }
.row .type { color: var(--muted); overflow: hidden; text-overflow: ellipsis; flex: 1; }
.row .badge { flex: none; }
.row .nodes, .row .params, .row .macs { color: var(--muted); font-size: 12px; flex: none; width: 64px; text-align: right;
                                        overflow: hidden; text-overflow: ellipsis; }
.row .params { width: 84px; }
.row .macs { width: 150px; }
.toggle { width: 18px; height: 18px; padding: 0; border: 0; background: none; cursor: pointer; color: var(--muted);
          font-size: 11px; flex: none; }
.toggle.none { visibility: hidden; }
.badge { display: inline-block; padding: 0 6px; border-radius: 8px; font-size: 11px; font-weight: 600; }
.badge.traced { color: var(--traced); background: var(--traced-bg); }
.badge.leaf { color: var(--leaf); background: var(--leaf-bg); }
.badge.failed { color: var(--failed); background: var(--failed-bg); }
.badge.unvisited { color: var(--unvisited); background: var(--unvisited-bg); }
#detail { flex: 1; overflow: auto; padding: 12px 18px; min-width: 0; }
#detail h2 { margin: 0 0 8px; font-size: 17px; word-break: break-all; }
#detail h3 { margin: 16px 0 6px; font-size: 15px; }
#detail h4 { margin: 12px 0 4px; font-size: 14px; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 0; }
.facts dt { color: var(--muted); }
.facts dd { margin: 0; word-break: break-word; }
.child-links { margin: 4px 0; padding-left: 18px; }
.link-button { border: 0; background: none; padding: 0; color: var(--accent); cursor: pointer; font: inherit;
               text-decoration: underline; text-align: left; }
.failure { border-left: 4px solid var(--failed); padding: 2px 0 6px 12px; margin-top: 12px; }
.failure-message { white-space: pre-wrap; background: var(--failed-bg); padding: 8px; border-radius: 4px; margin: 6px 0; }
.snippet { margin: 8px 0; }
.snippet figcaption { color: var(--muted); font-size: 12px; }
.snippet pre { margin: 2px 0; padding: 6px 0; background: #f6f7f9; border: 1px solid var(--line); border-radius: 4px;
               overflow: auto; }
.snippet .line { display: block; padding: 0 8px; white-space: pre; }
.snippet .line.hit { background: var(--failed-bg); }
.snippet .ln { display: inline-block; min-width: 40px; color: var(--muted); user-select: none; }
table.warnings { border-collapse: collapse; }
table.warnings td, table.warnings th { border: 1px solid var(--line); padding: 2px 6px; text-align: left; vertical-align: top; }
.graph-head { display: flex; align-items: center; gap: 12px; flex-wrap: wrap; }
.graph-head h3, .graph-head h4 { margin: 12px 0 6px; }
.graph-tools { display: flex; gap: 4px; }
button.tool { font: inherit; font-size: 12px; padding: 2px 8px; border: 1px solid var(--line); border-radius: 4px;
              background: #fff; cursor: pointer; }
button.tool:hover { background: #f1f4f8; }
.graph-view { height: 70vh; border: 1px solid var(--line); border-radius: 4px; background: #fcfcfd; overflow: hidden;
              touch-action: none; }
.graph-view.closed { height: auto; padding: 10px; color: var(--muted); }
svg.graph { width: 100%; height: 100%; display: block; cursor: grab; user-select: none; }
svg.graph.dragging { cursor: grabbing; }
svg.graph .edge { fill: none; stroke: #7d8590; stroke-width: 1; }
svg.graph .arrowhead { fill: #7d8590; }
svg.graph .node rect { stroke: #8a929c; stroke-width: 1; fill: #fff; }
svg.graph .node text { font: 10px Helvetica, Arial, sans-serif; fill: #1d2025; text-anchor: middle; }
svg.graph .node text.name { font-weight: bold; }
svg.graph .op-placeholder rect { fill: #d9f2d9; }
svg.graph .op-output rect { fill: #e4e4e4; }
svg.graph .op-get_attr rect { fill: #fff4c2; }
svg.graph .op-call_method rect { fill: #efe6fb; }
svg.graph .op-call_module rect { fill: #d6e6fb; }
svg.graph .failed rect { fill: #f8d0cc; stroke: var(--failed); stroke-width: 2; }
svg.graph .link { cursor: pointer; }
svg.graph .link rect { stroke: var(--accent); stroke-width: 2; }
svg.graph .link:hover rect, svg.graph .link:focus rect { stroke-width: 3; }
svg.graph .link:focus { outline: none; }
.legend { display: flex; flex-wrap: wrap; gap: 10px; color: var(--muted); font-size: 12px; margin: 4px 0; }
.legend .swatch { display: inline-block; width: 12px; height: 10px; border: 1px solid #8a929c; margin-right: 4px;
                  vertical-align: -1px; }
</style>
</head>
)page";

const std::string_view report_page_body = R"page(<body>
<header>
<div><h1 id="model"></h1></div>
<dl id="totals"></dl>
<div class="search">
<input id="search" type="search" placeholder="Find a module by path or type" autocomplete="off" aria-label="Find a module by path or type">
<ul id="search-results" hidden></ul>
</div>
</header>
<main>
<nav id="tree-pane" aria-label="Module tree">
<div class="tree-tools"><button type="button" class="tool" id="expand-all">Unfold all</button><button type="button" class="tool" id="collapse-all">Fold all</button></div>
<div id="tree" role="tree"></div>
</nav>
<section id="detail" aria-live="polite"></section>
</main>
<noscript><p>This report draws its module tree and graphs with JavaScript; turn it on to read it.</p></noscript>
)page";

const std::string_view report_page_script = R"page(<script>
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("report-data").textContent);
  var M = D.modules;
  var AUTO_DRAW = 1500;          // a graph up to this size is drawn when its module is opened
  var EXPAND_ALL_LIMIT = 20000;  // rows "Unfold all" makes at most
  var SVGNS = "http://www.w3.org/2000/svg";
  var drawings = 0;              // makes each drawing's marker id unique

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function svgEl(tag, attrs) {
    var e = document.createElementNS(SVGNS, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    return e;
  }
  function grouped(n) { return typeof n === "number" ? n.toLocaleString("en-US") : String(n); }
  function title(i) { return i === 0 ? D.model : M[i].path; }

  // Each module's parent on the path the report names it by (a shared module has several).
  var parent = new Int32Array(M.length);
  for (var i = 0; i < M.length; i++) parent[i] = M[i].parent;

  // ---- header -----------------------------------------------------------------------------
  document.getElementById("model").textContent = D.model;
  var totals = document.getElementById("totals");
  [["modules", "modules"], ["traced", "traced"], ["leaf", "leaf"], ["failed", "failed"], ["unvisited", "unvisited"],
   ["graphs", "graphs"], ["nodes", "nodes"], ["parameters", "parameters"], ["macs", "MACs"]].forEach(function (t) {
    if (D.totals[t[0]] === undefined) return;
    var d = el("div", "total total-" + t[0]);
    d.dataset.total = t[0];
    d.append(el("dt", null, t[1]), el("dd", null, grouped(D.totals[t[0]])));
    totals.append(d);
  });

  // ---- the module tree: rows made when their parent unfolds ---------------------------------
  var tree = document.getElementById("tree");
  var hasCosts = D.totals.parameters !== undefined;
  var selected = -1;

  function makeItem(i, name, depth) {
    var m = M[i];
    var item = el("div", "item");
    item.setAttribute("role", "treeitem");
    var row = el("div", "row");
    row.dataset.module = i;
    row.dataset.path = m.path;
    row.style.paddingLeft = (4 + depth * 16) + "px";
    var toggle = el("button", "toggle");
    toggle.type = "button";
    if (m.children.length) {
      toggle.textContent = "\u25B8";
      toggle.setAttribute("aria-label", "Unfold");
      item.setAttribute("aria-expanded", "false");
    } else {
      toggle.classList.add("none");
      toggle.tabIndex = -1;
    }
    row.append(toggle, el("span", "name", name), el("span", "type", m.type), el("span", "badge " + m.status, m.status),
               el("span", "nodes", m.nodes !== undefined ? grouped(m.nodes) + " nodes" : ""));
    if (hasCosts) {
      row.append(el("span", "params", m.parameters !== undefined ? m.parameters : ""),
                 el("span", "macs", m.macs !== undefined ? m.macs + " MACs" : "? MACs"));
    }
    if (i === selected) row.classList.add("selected");
    item.append(row);
    item.moduleIndex = i;
    item.depth = depth;
    toggle.addEventListener("click", function (e) { e.stopPropagation(); if (item.box && !item.box.hidden) fold(item); else unfold(item); });
    row.addEventListener("click", function () { select(i, {}); });
    return item;
  }
  function unfold(item) {
    var m = M[item.moduleIndex];
    if (!m.children.length) return 0;
    var made = 0;
    if (!item.box) {
      var box = el("div", "children");
      box.setAttribute("role", "group");
      var frag = document.createDocumentFragment();
      for (var k = 0; k < m.children.length; k++) frag.append(makeItem(m.children[k], m.names[k], item.depth + 1));
      made = m.children.length;
      box.append(frag);
      item.append(box);
      item.box = box;
    }
    item.box.hidden = false;
    item.firstChild.firstChild.textContent = "\u25BE";
    item.firstChild.firstChild.setAttribute("aria-label", "Fold");
    item.setAttribute("aria-expanded", "true");
    return made;
  }
  function fold(item) {
    if (!item.box) return;
    item.box.hidden = true;
    item.firstChild.firstChild.textContent = "\u25B8";
    item.firstChild.firstChild.setAttribute("aria-label", "Unfold");
    item.setAttribute("aria-expanded", "false");
  }
  var rootItem = makeItem(0, D.model, 0);
  tree.append(rootItem);
  if (M[0].children.length <= 2000) unfold(rootItem);

  document.getElementById("expand-all").addEventListener("click", function () {
    var queue = [rootItem], made = 0;
    for (var q = 0; q < queue.length && made < EXPAND_ALL_LIMIT; q++) {
      made += unfold(queue[q]);
      if (queue[q].box) for (var c = queue[q].box.firstChild; c; c = c.nextSibling) queue.push(c);
    }
  });
  document.getElementById("collapse-all").addEventListener("click", function () {
    tree.querySelectorAll(".item").forEach(fold);
  });

  // Unfolds the tree down to module i along its first path; returns its row.
  function reveal(i) {
    var chain = [];
    for (var m = i; m > 0; m = parent[m]) chain.push(m);
    var item = rootItem;
    while (chain.length) {
      var next = chain.pop();
      unfold(item);
      if (!item.box) break;
      var found = null;
      for (var c = item.box.firstChild; c; c = c.nextSibling) if (c.moduleIndex === next) { found = c; break; }
      if (!found) break;
      item = found;
    }
    return item.firstChild;
  }

  // ---- the detail pane --------------------------------------------------------------------
  var detail = document.getElementById("detail");
  var pendingDraws = [];

  function fact(list, name, value, cls) {
    list.append(el("dt", null, name));
    var dd = el("dd", cls || null);
    if (value instanceof Node) dd.append(value); else dd.textContent = String(value);
    list.append(dd);
  }
  function moduleButton(i, text) {
    var b = el("button", "link-button", text);
    b.type = "button";
    b.dataset.module = i;
    b.addEventListener("click", function () { follow(i); });
    return b;
  }

  function select(i, opts) {
    tree.querySelectorAll(".row.selected").forEach(function (r) { r.classList.remove("selected"); });
    selected = i;
    tree.querySelectorAll('.row[data-module="' + i + '"]').forEach(function (r) { r.classList.add("selected"); });
    var m = M[i];
    detail.textContent = "";
    detail.dataset.module = i;
    detail.append(el("h2", "detail-title", title(i)));
    var facts = el("dl", "facts");
    fact(facts, "type", m.type, "detail-type");
    fact(facts, "status", el("span", "badge " + m.status, m.status));
    if (m.nodes !== undefined) fact(facts, "graph", grouped(m.nodes) + " nodes");
    if (m.parameters !== undefined) fact(facts, "parameters", m.parameters);
    if (hasCosts) fact(facts, "MACs", m.macs !== undefined ? m.macs : "unknown");
    if (i !== 0) {
      var p = parent[i];
      fact(facts, "parent", p >= 0 ? moduleButton(p, title(p)) : "?");
    }
    detail.append(facts);
    if (m.children.length) {
      var h = el("h3", null, "Children (" + m.children.length + ")");
      var list = el("ul", "child-links");
      var shown = Math.min(m.children.length, 200);
      for (var k = 0; k < shown; k++) {
        var li = el("li");
        var c = M[m.children[k]];
        li.append(moduleButton(m.children[k], m.names[k]), document.createTextNode(" " + c.type + " "),
                  el("span", "badge " + c.status, c.status));
        list.append(li);
      }
      if (shown < m.children.length) list.append(el("li", null, "\u2026 and " + (m.children.length - shown) + " more"));
      detail.append(h, list);
    }
    if (m.failure !== undefined) detail.append(failureSection(D.failures[m.failure], opts));
    if (m.graph !== undefined) {
      detail.append(graphSection(m.graph, "Graph", "h3", opts.openGraph || D.graphs[m.graph].nodes.length <= AUTO_DRAW));
    }
    var draws = pendingDraws;
    pendingDraws = [];
    draws.forEach(function (d) { d(); });
  }

  // Shows module i, unfolding the tree to it; `draw` draws its graph whatever its size (a
  // call_module node was followed), else as selecting its row does.
  function follow(i, draw) {
    var row = reveal(i);
    select(i, {openGraph: !!draw});
    if (row && row.scrollIntoView) row.scrollIntoView({block: "nearest"});
    detail.scrollTop = 0;
  }

  function failureSection(f, opts) {
    var s = el("section", "failure");
    s.append(el("h3", null, "Failure"));
    var facts = el("dl", "facts");
    fact(facts, "kind", f.kind, "failure-kind");
    fact(facts, "where", f.source ? el("code", "failure-source", f.source) : el("span", "failure-source", "unknown"));
    if (f.op) fact(facts, "refused by", el("code", "failure-op", f.op));
    s.append(facts, el("pre", "failure-message", f.message));
    if (f.snippet) {
      var fig = el("figure", "snippet");
      fig.append(el("figcaption", null, f.snippet.file));
      var pre = el("pre"), code = el("code");
      for (var k = 0; k < f.snippet.lines.length; k++) {
        var n = f.snippet.first + k;
        var line = el("span", n === f.snippet.line ? "line hit" : "line");
        line.append(el("span", "ln", n), document.createTextNode(f.snippet.lines[k] + "\n"));
        code.append(line);
      }
      pre.append(code);
      fig.append(pre);
      s.append(fig);
    }
    var b = f.by_execution;
    if (b) {
      var c = el("section", "by-execution");
      c.append(el("h4", null, "Captured by execution"));
      var cf = el("dl", "facts");
      fact(cf, "inputs", b.inputs.length ? b.inputs.join(", ") : "none");
      if (b.error) fact(cf, "not captured", b.error, "by-execution-error");
      c.append(cf);
      if (b.warnings.length) {
        var t = el("table", "warnings"), head = el("tr");
        ["kind", "where", "module", "count", "message"].forEach(function (x) { head.append(el("th", null, x)); });
        t.append(head);
        b.warnings.forEach(function (w) {
          var r = el("tr");
          [w.kind, w.source, w.module, w.count, w.message].forEach(function (x) { r.append(el("td", null, x)); });
          t.append(r);
        });
        c.append(t);
      }
      if (b.graph !== null) c.append(graphSection(b.graph, "Graph captured by execution", "h4", !!opts.openGraph));
      s.append(c);
    }
    return s;
  }

  // ---- graphs: drawn when opened, with pan and zoom ----------------------------------------
  function graphSection(g, heading, level, draw) {
    var G = D.graphs[g];
    var s = el("section", "graph-section");
    s.dataset.graph = g;
    var head = el("div", "graph-head");
    head.append(el(level, null, heading + " (" + grouped(G.nodes.length) + " nodes)"));
    var tools = el("div", "graph-tools");
    var open = el("button", "tool open-graph", "Draw graph");
    open.type = "button";
    tools.append(open);
    head.append(tools);
    var view = el("div", "graph-view closed", "Not drawn yet: " + grouped(G.nodes.length) + " nodes.");
    s.append(head, view, legend());
    var drawn = false;
    function doDraw() {
      if (drawn) return;
      drawn = true;
      open.remove();
      var z = drawGraph(g, view);
      [["Fit", "zoom-fit", z.fit], ["+", "zoom-in", function () { z.zoom(1.25); }],
       ["\u2212", "zoom-out", function () { z.zoom(0.8); }]].forEach(function (t) {
        var b = el("button", "tool " + t[1], t[0]);
        b.type = "button";
        b.addEventListener("click", t[2]);
        tools.append(b);
      });
    }
    open.addEventListener("click", doDraw);
    if (draw) pendingDraws.push(doDraw);  // drawn once the section is in the page (it sizes the view)
    return s;
  }

  function legend() {
    var l = el("div", "legend");
    [["placeholder", "#d9f2d9"], ["call_function", "#ffffff"], ["call_method", "#efe6fb"], ["call_module", "#d6e6fb"],
     ["get_attr", "#fff4c2"], ["output", "#e4e4e4"], ["failed module", "#f8d0cc"]].forEach(function (t) {
      var s = el("span");
      var w = el("span", "swatch");
      w.style.background = t[1];
      s.append(w, document.createTextNode(t[0]));
      l.append(s);
    });
    l.append(el("span", null, "Blue outline: click to open that module. Drag to pan, wheel to zoom."));
    return l;
  }

  function drawGraph(g, view) {
    var G = D.graphs[g];
    var id = "arrow" + (drawings++);
    view.textContent = "";
    view.classList.remove("closed");
    var svg = svgEl("svg", {"class": "graph", "data-graph": g, "role": "img",
                            "aria-label": "graph of " + title(G.module)});
    var defs = svgEl("defs", {});
    // Edges end where their arrowhead begins (as dot draws them): the head's 10 points follow.
    var marker = svgEl("marker", {id: id, viewBox: "0 0 10 10", refX: "0", refY: "5", markerWidth: "10",
                                  markerHeight: "7", markerUnits: "userSpaceOnUse", orient: "auto"});
    marker.append(svgEl("path", {d: "M0,0 L10,5 L0,10 z", "class": "arrowhead"}));
    defs.append(marker);
    var vp = svgEl("g", {"class": "viewport"});
    var edges = document.createDocumentFragment();
    G.edges.forEach(function (e) {
      var d = "M" + e[0] + " " + e[1];
      for (var k = 2; k + 5 < e.length; k += 6) d += "C" + e.slice(k, k + 6).join(" ");
      edges.append(svgEl("path", {d: d, "class": "edge", "marker-end": "url(#" + id + ")"}));
    });
    vp.append(edges);
    var nodes = document.createDocumentFragment();
    G.nodes.forEach(function (n) {
      var cls = "node op-" + n[4] + (n[9] ? " failed" : "") + (n[8] >= 0 ? " link" : "");
      var gn = svgEl("g", {"class": cls, "data-name": n[5]});
      gn.append(svgEl("rect", {x: (n[0] - n[2] / 2).toFixed(1), y: (n[1] - n[3] / 2).toFixed(1), width: n[2],
                               height: n[3], rx: 3}));
      var lines = n[7] ? [n[5], n[6], n[7]] : [n[5], n[6]];
      var y0 = n[1] - (lines.length - 1) * 6 + 3.5;
      lines.forEach(function (t, k) {
        var tx = svgEl("text", {x: n[0], y: (y0 + 12 * k).toFixed(1)});
        if (k === 0) tx.setAttribute("class", "name");
        tx.textContent = t;
        gn.append(tx);
      });
      var tip = lines.join("\n");
      if (n[8] >= 0) {
        gn.setAttribute("data-link", n[8]);
        gn.setAttribute("tabindex", "0");
        gn.setAttribute("role", "link");
        tip += "\nopens " + title(n[8]) + " (" + M[n[8]].status + ")";
        var target = n[8];
        gn.addEventListener("click", function () { if (!svg.moved) follow(target, true); });
        gn.addEventListener("keydown", function (e) { if (e.key === "Enter") follow(target, true); });
      }
      var t = svgEl("title", {});
      t.textContent = tip;
      gn.prepend(t);
      nodes.append(gn);
    });
    vp.append(nodes);
    svg.append(defs, vp);
    view.append(svg);
    return panZoom(svg, vp, G);
  }

  function panZoom(svg, vp, G) {
    var st = {x: 0, y: 0, k: 1};
    var least = 0.01;  // the smallest scale: lower for a graph whose whole view needs it
    function apply() { vp.setAttribute("transform", "translate(" + st.x + "," + st.y + ") scale(" + st.k + ")"); }
    function size() { var r = svg.getBoundingClientRect(); return {w: r.width || 800, h: r.height || 600}; }
    function fit() {
      var s = size();
      st.k = Math.min((s.w - 20) / (G.width + 1), (s.h - 20) / (G.height + 1), 1.5);
      least = Math.min(0.01, st.k);
      st.x = (s.w - G.width * st.k) / 2;
      st.y = (s.h - G.height * st.k) / 2;
      apply();
    }
    function zoom(f, px, py) {
      var s = size();
      if (px === undefined) { px = s.w / 2; py = s.h / 2; }
      var k = Math.max(least, Math.min(8, st.k * f));
      st.x = px - (px - st.x) * k / st.k;
      st.y = py - (py - st.y) * k / st.k;
      st.k = k;
      apply();
    }
    svg.addEventListener("wheel", function (e) {
      e.preventDefault();
      var r = svg.getBoundingClientRect();
      zoom(Math.exp(-e.deltaY * 0.0015), e.clientX - r.left, e.clientY - r.top);
    }, {passive: false});
    var drag = null;
    svg.addEventListener("pointerdown", function (e) {
      if (e.button !== 0) return;
      drag = {x: e.clientX, y: e.clientY, sx: st.x, sy: st.y};
      svg.moved = false;
    });
    svg.addEventListener("pointermove", function (e) {
      if (!drag) return;
      if (e.buttons === 0) { end(); return; }  // the release happened where we did not see it
      var dx = e.clientX - drag.x, dy = e.clientY - drag.y;
      if (!svg.moved && Math.abs(dx) + Math.abs(dy) > 3) {
        svg.moved = true;
        svg.classList.add("dragging");
        svg.setPointerCapture(e.pointerId);
      }
      if (svg.moved) { st.x = drag.sx + dx; st.y = drag.sy + dy; apply(); }
    });
    function end() { drag = null; svg.classList.remove("dragging"); }
    svg.addEventListener("pointerup", end);
    svg.addEventListener("pointercancel", end);
    // A graph that fits at half size or more is shown whole; a taller one starts at its top.
    var s = size();
    var whole = Math.min((s.w - 20) / (G.width + 1), (s.h - 20) / (G.height + 1));
    least = Math.min(0.01, whole);
    if (whole >= 0.5) {
      fit();
    } else {
      st.k = Math.min(1, (s.w - 20) / (G.width + 1));
      st.x = (s.w - G.width * st.k) / 2;
      st.y = 10;
      apply();
    }
    return {fit: fit, zoom: zoom};
  }

  // ---- search -----------------------------------------------------------------------------
  var search = document.getElementById("search");
  var results = document.getElementById("search-results");
  var MAX_RESULTS = 50;
  search.addEventListener("input", function () {
    var q = search.value.trim().toLowerCase();
    results.textContent = "";
    if (!q) { results.hidden = true; return; }
    var shown = 0, total = 0;
    for (var i = 0; i < M.length; i++) {
      if (title(i).toLowerCase().indexOf(q) < 0 && M[i].type.toLowerCase().indexOf(q) < 0) continue;
      total++;
      if (shown === MAX_RESULTS) continue;
      shown++;
      var li = el("li");
      var b = el("button", "result");
      b.type = "button";
      b.dataset.module = i;
      b.append(el("span", "path", title(i)), el("span", "type", M[i].type), el("span", "badge " + M[i].status, M[i].status));
      b.addEventListener("click", (function (target) {
        return function () { results.hidden = true; follow(target); };
      })(i));
      li.append(b);
      results.append(li);
    }
    if (total === 0) results.append(el("li", "note", "No module's path or type holds \u201C" + search.value.trim() + "\u201D."));
    else if (total > shown) results.append(el("li", "note", "\u2026 and " + (total - shown) + " more; type more to narrow."));
    results.hidden = false;
  });
  search.addEventListener("keydown", function (e) {
    if (e.key === "Enter") { var first = results.querySelector(".result"); if (first) first.click(); }
    else if (e.key === "Escape") { search.value = ""; results.textContent = ""; results.hidden = true; }
  });

  select(0, {});
  document.body.dataset.readyMs = performance.now().toFixed(0);
  document.body.dataset.ready = "true";
})();
</script>
</body>
</html>
)page";

}  // namespace symtrace::detail
