/* airctl report viewer (airctl's own code, no libraries).
 *
 * Reads the JSON payload from the "airctl-data" script element (application/json), draws the graph
 * of the selected stage on a canvas (only the nodes in view, found through a grid), and builds the
 * side panels with textContent only: graph contents never become markup.
 * URL hash: #graph=<index|id>&stage=<index|name>&search=<text>&node=<name>&tab=<graph|findings|profile|run>
 */
(function () {
  "use strict";
  var t0 = (window.performance || Date).now();
  var data = JSON.parse(document.getElementById("airctl-data").textContent);
  var parseMs = (window.performance || Date).now() - t0;
  var W = 150, H = 34, CELL = 600;
  var EDGE = { data: ["#8a8f98", [], 1], control: ["#2f6fdb", [6, 4], 1.4], sync: ["#d62728", [4, 3], 2.2] };
  var STATUS = { added: "#1a7f37", removed: "#cf222e", changed: "#e36209" };
  var REMOVED_EDGE = "#ff8182";

  function $(id) { return document.getElementById(id); }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }
  function pad3(n) { return ("00" + n).slice(-3); }
  function fmt(v) { return v === null || v === undefined ? "" : (typeof v === "object" ? JSON.stringify(v) : String(v)); }

  var state = { graph: 0, stage: -1, showAll: false, search: "", hits: [], hitAt: -1, selected: -1, views: {} };
  var graphs = data.graphs || [], groups = data.groups || [];

  /* ---- per-group caches: node position per snapshot, spatial grid ---- */
  function prepGroup(g) {
    if (g._ready) return g;
    var n = g.keys.length;
    g._grid = new Map();
    for (var u = 0; u < n; u++) {
      var key = Math.floor(g.x[u] / CELL) + "," + Math.floor(g.y[u] / CELL);
      var cell = g._grid.get(key);
      if (!cell) { cell = []; g._grid.set(key, cell); }
      cell.push(u);
    }
    var minx = Infinity, miny = Infinity, maxx = -Infinity, maxy = -Infinity;
    for (u = 0; u < n; u++) {
      if (g.x[u] < minx) minx = g.x[u]; if (g.x[u] > maxx) maxx = g.x[u];
      if (g.y[u] < miny) miny = g.y[u]; if (g.y[u] > maxy) maxy = g.y[u];
    }
    g._bounds = n ? [minx - W, miny - H, maxx + W, maxy + H] : [0, 0, 1, 1];
    g._ready = true;
    return g;
  }
  function snapPos(g, s) {
    var snap = g.snapshots[s];
    if (!snap._pos) {
      var pos = new Int32Array(g.keys.length).fill(-1);
      for (var i = 0; i < snap.nodes.length; i++) pos[snap.nodes[i]] = i;
      snap._pos = pos;
    }
    return snap._pos;
  }
  function nodeName(g, snap, i) {
    var r = snap.names[i];
    return r === undefined ? g.keys[snap.nodes[i]] : r;
  }

  /* ---- current stage ---- */
  function cur() {
    var gr = graphs[state.graph];
    if (!gr) return null;
    var st = gr.stages[state.stage];
    if (!st || st.group === null || st.group === undefined) return { graph: gr, stage: st };
    var g = prepGroup(groups[st.group]);
    var snap = g.snapshots[st.snap];
    var status = new Map();
    var ghosts = [];
    if (st.diff) {
      st.diff.added.forEach(function (u) { status.set(u, "added"); });
      st.diff.changed.forEach(function (c) { status.set(c[0], "changed"); });
      var pos = snapPos(g, st.snap);
      st.diff.removed.forEach(function (u) { if (pos[u] < 0) ghosts.push(u); else status.set(u, "removed"); });
    }
    return { graph: gr, stage: st, g: g, snap: snap, pos: snapPos(g, st.snap), status: status, ghosts: ghosts };
  }
  function prevSnapshot(c) {
    var stages = c.graph.stages;
    for (var k = state.stage - 1; k >= 0; k--) {
      var s = stages[k];
      if (s.group === c.stage.group && s.snap !== c.stage.snap) return c.g.snapshots[s.snap];
      if (s.group !== c.stage.group) return null;
    }
    return null;
  }
  function visibleStage(st) { return state.showAll || st.changed !== false; }

  /* ---- header, tabs ---- */
  function buildHeader() {
    var run = data.run || {};
    document.title = data.title || "airctl";
    $("title").textContent = data.title || "airctl";
    var parts = [];
    if (run.status) parts.push("status: " + run.status);
    if (run.mode) parts.push("mode: " + run.mode);
    if (run.backend && run.backend.name) parts.push("backend: " + run.backend.name);
    if (run.execution && run.execution.matches_eager !== undefined) {
      parts.push("matches eager: " + run.execution.matches_eager);
    }
    $("run-line").textContent = parts.join(" · ");
    if (run.status) $("run-line").className = "run status-" + run.status;
  }
  function showTab(name) {
    var tabs = document.querySelectorAll("nav.tabs button");
    for (var i = 0; i < tabs.length; i++) tabs[i].classList.toggle("active", tabs[i].dataset.tab === name);
    var secs = document.querySelectorAll("section.tab");
    for (i = 0; i < secs.length; i++) secs[i].classList.toggle("active", secs[i].id === "tab-" + name);
    if (name === "graph") { resize(); }
  }

  /* ---- stage list ---- */
  function buildGraphSelect() {
    var sel = $("graph-select");
    clear(sel);
    graphs.forEach(function (gr, k) {
      var label = gr.id + (gr.kind ? " (" + gr.kind + ")" : "") + (gr.name ? " " + gr.name : "");
      var o = el("option", null, label);
      o.value = String(k);
      sel.appendChild(o);
    });
    sel.value = String(state.graph);
    sel.parentNode.style.display = graphs.length > 1 ? "" : "none";
    sel.onchange = function () { selectGraph(+sel.value); };
  }
  function buildStageList() {
    var ul = $("stages");
    clear(ul);
    var gr = graphs[state.graph];
    if (!gr) { ul.appendChild(el("li", "missing", "no graphs in this run")); return; }
    var hidden = 0;
    gr.stages.forEach(function (st, k) {
      if (!visibleStage(st) && k !== state.stage) { hidden++; return; }
      var li = el("li", "stage");
      if (k === state.stage) li.classList.add("current");
      if (st.changed === false) li.classList.add("unchanged");
      if (st.missing) li.classList.add("missing");
      li.appendChild(el("span", "idx", pad3(st.index)));
      li.appendChild(el("span", "name", st.name));
      li.appendChild(el("span", "n", st.nodes === null || st.nodes === undefined ? "" : st.nodes));
      var d = st.diff && st.diff.summary;
      if (d) {
        if (d.added) li.appendChild(el("span", "badge b-added", "+" + d.added));
        if (d.removed) li.appendChild(el("span", "badge b-removed", "\u2212" + d.removed));
        if (d.changed) li.appendChild(el("span", "badge b-changed", "~" + d.changed));
      }
      li.title = st.name + (st.seconds ? " (" + st.seconds.toFixed(3) + " s)" : "");
      li.addEventListener("click", function () { selectStage(k); });
      ul.appendChild(li);
    });
    $("hidden-count").textContent = hidden ? hidden + " unchanged stage" + (hidden > 1 ? "s" : "") + " hidden" : "";
  }
  function selectGraph(k) {
    state.graph = k;
    var gr = graphs[k];
    state.stage = gr && gr.stages.length ? (gr.open === null || gr.open === undefined ? gr.stages.length - 1 : gr.open) : -1;
    while (gr && state.stage > 0 && gr.stages[state.stage].missing) state.stage--;
    state.selected = -1;
    buildStageList();
    selectStage(state.stage);
  }
  function selectStage(k) {
    var gr = graphs[state.graph];
    if (!gr || k < 0 || k >= gr.stages.length) { render(); return; }
    var before = cur();
    state.stage = k;
    var c = cur();
    if (before && before.g && c.g && before.g !== c.g) state.selected = -1;
    buildStageList();
    var li = document.querySelector("#stages li.current");
    if (li && li.scrollIntoView) li.scrollIntoView({ block: "nearest" });
    runSearch(false);
    showDetails();
    updateCount();
    buildLegend();
    if (c.g && !state.views[c.stage.group]) fit();
    render();
    writeHash();
  }
  function stepStage(delta) {
    var gr = graphs[state.graph];
    if (!gr) return;
    for (var k = state.stage + delta; k >= 0 && k < gr.stages.length; k += delta) {
      if (visibleStage(gr.stages[k])) { selectStage(k); return; }
    }
  }
  function updateCount() {
    var c = cur();
    var box = $("node-count");
    if (!c || !c.stage) { box.textContent = "no stage"; return; }
    if (!c.g) { box.textContent = "stage " + pad3(c.stage.index) + " " + c.stage.name + ": snapshot missing"; return; }
    var e = c.snap.edges, ne = (e.data.length + e.control.length + e.sync.length) / 2;
    var text = "stage " + pad3(c.stage.index) + " " + c.stage.name + " \u00b7 " + c.snap.nodes.length + " nodes \u00b7 " +
      ne + " edges";
    var d = c.stage.diff && c.stage.diff.summary;
    if (d) text += " \u00b7 diff: +" + d.added + " \u2212" + d.removed + " ~" + d.changed + ", edges +" +
      d.edges_added + " \u2212" + d.edges_removed;
    else if (c.stage.diff === null) text += " \u00b7 first " + c.g.dialect + " stage";
    box.textContent = text;
    box.dataset.nodes = String(c.snap.nodes.length);
  }

  /* ---- legend ---- */
  function buildLegend() {
    var c = cur(), box = $("legend");
    clear(box);
    if (!c || !c.g) return;
    var used = new Set(c.snap.stream);
    c.g.streams.forEach(function (s, k) {
      if (!used.has(k)) return;
      var row = el("div"), sw = el("span", "sw");
      sw.style.background = c.g.fills[k];
      row.appendChild(sw); row.appendChild(el("span", null, s === null ? "default stream" : s));
      box.appendChild(row);
    });
    Object.keys(EDGE).forEach(function (kind) {
      var row = el("div"), ln = el("span", "ln");
      ln.style.borderTopColor = EDGE[kind][0];
      if (EDGE[kind][1].length) ln.style.borderTopStyle = "dashed";
      row.appendChild(ln); row.appendChild(el("span", null, kind + " edge"));
      box.appendChild(row);
    });
    if (c.stage.diff) {
      Object.keys(STATUS).forEach(function (s) {
        var row = el("div"), sw = el("span", "sw");
        sw.style.border = "2px solid " + STATUS[s];
        row.appendChild(sw); row.appendChild(el("span", null, s));
        box.appendChild(row);
      });
      [["added edge", STATUS.added, "solid"], ["removed edge", REMOVED_EDGE, "dotted"]].forEach(function (e) {
        var row = el("div"), ln = el("span", "ln");
        ln.style.borderTopColor = e[1]; ln.style.borderTopStyle = e[2]; ln.style.borderTopWidth = "3px";
        row.appendChild(ln); row.appendChild(el("span", null, e[0]));
        box.appendChild(row);
      });
    }
  }

  /* ---- search ---- */
  function runSearch(jump) {
    var c = cur(), q = state.search.trim().toLowerCase();
    state.hits = []; state.hitAt = -1;
    var ul = $("hits");
    clear(ul);
    if (!q || !c || !c.g) { $("hit-count").textContent = q ? "no graph" : ""; render(); return; }
    var g = c.g, snap = c.snap;
    for (var i = 0; i < snap.nodes.length; i++) {
      var name = nodeName(g, snap, i), op = g.ops[snap.op[i]];
      if (name.toLowerCase().indexOf(q) >= 0 || op.toLowerCase().indexOf(q) >= 0) state.hits.push(snap.nodes[i]);
    }
    $("hit-count").textContent = state.hits.length + " match" + (state.hits.length === 1 ? "" : "es") +
      " for \u201c" + state.search.trim() + "\u201d" + (state.hits.length > 200 ? " (first 200 listed)" : "");
    state.hits.slice(0, 200).forEach(function (u, k) {
      var i = c.pos[u];
      var li = el("li", "hit");
      li.appendChild(el("span", "name", nodeName(g, snap, i)));
      li.appendChild(el("span", "op", " \u2014 " + g.ops[snap.op[i]]));
      li.addEventListener("click", function () { state.hitAt = k; focusNode(u); });
      ul.appendChild(li);
    });
    if (jump && state.hits.length) { state.hitAt = 0; focusNode(state.hits[0]); }
    render();
  }

  /* ---- details ---- */
  function row(table, key, value, cls) {
    var tr = el("tr");
    tr.appendChild(el("th", null, key));
    var td = el("td", cls || null);
    if (value instanceof Node) td.appendChild(value); else td.textContent = fmt(value);
    tr.appendChild(td);
    table.appendChild(tr);
  }
  function showDetails() {
    var box = $("details");
    clear(box);
    var c = cur();
    if (!c || !c.g || state.selected < 0) { box.appendChild(el("p", "muted", "Click a node for its attributes.")); return; }
    var u = state.selected, i = c.pos[u], g = c.g, snap = c.snap;
    var st = c.status.get(u) || (c.ghosts.indexOf(u) >= 0 ? "removed" : null);
    var source = snap, at = i;
    if (i < 0) {
      var prev = prevSnapshot(c);
      var pp = prev ? prev.nodes.indexOf(u) : -1;
      if (pp < 0) { box.appendChild(el("p", "muted", "Not in this stage.")); return; }
      source = prev; at = pp;
    }
    var det = g.details[source.det[at]] || {};
    box.appendChild(el("h2", null, nodeName(g, source, at)));
    var t = el("table");
    row(t, "op", g.ops[source.op[at]]);
    var s = g.streams[source.stream[at]];
    row(t, "stream", s === null ? "default stream" : s);
    row(t, "kind", det.kind);
    if (det.module) row(t, "module", det.module);
    row(t, "source", det.source || "\u2014");
    if (st) row(t, "diff", st + (st === "removed" && i < 0 ? " (shown from the previous stage)" : ""), "status-" + st);
    if (st === "changed") {
      var ch = c.stage.diff.changed.filter(function (x) { return x[0] === u; })[0];
      if (ch) row(t, "what changed", ch[1]);
      var prev2 = prevSnapshot(c), pi = prev2 ? prev2.nodes.indexOf(u) : -1;
      if (pi >= 0) {
        var was = g.ops[prev2.op[pi]], ws = g.streams[prev2.stream[pi]];
        row(t, "was", was + " on " + (ws === null ? "default stream" : ws));
        var old = g.details[prev2.det[pi]] || {};
        if (JSON.stringify(old.attrs || {}) !== JSON.stringify(det.attrs || {})) {
          row(t, "attrs before", el("pre", null, JSON.stringify(old.attrs || {}, null, 1)));
        }
      }
    }
    if (det.inputs) row(t, "inputs", det.inputs.join(", "));
    if (det.control_inputs) row(t, "control inputs", det.control_inputs.join(", "));
    box.appendChild(t);
    if (det.attrs) { box.appendChild(el("h2", null, "attributes")); box.appendChild(el("pre", null, JSON.stringify(det.attrs, null, 1))); }
    if (det.meta) { box.appendChild(el("h2", null, "meta")); box.appendChild(el("pre", null, JSON.stringify(det.meta, null, 1))); }
  }

  /* ---- canvas ---- */
  var canvas, ctx, dpr = 1, pending = false;
  function view() {
    var c = cur();
    if (!c || !c.g) return { x: 0, y: 0, k: 1 };
    var key = c.stage.group;
    if (!state.views[key]) state.views[key] = { x: 0, y: 0, k: 1 };
    return state.views[key];
  }
  function resize() {
    if (!canvas) return;
    var r = canvas.getBoundingClientRect();
    dpr = window.devicePixelRatio || 1;
    canvas.width = Math.max(1, Math.round(r.width * dpr));
    canvas.height = Math.max(1, Math.round(r.height * dpr));
    render();
  }
  function size() { return [canvas.width / dpr, canvas.height / dpr]; }
  function fit(whole) {
    var c = cur();
    if (!c || !c.g) return;
    var b = c.g._bounds, sz = size(), v = view();
    var k = Math.min(sz[0] / (b[2] - b[0]), (sz[1] - 40) / (b[3] - b[1]), 1.5);
    var tall = k < 0.3 && whole !== true;  // a very tall graph: readable width, start at the top
    if (tall) k = Math.max(Math.min(sz[0] / (b[2] - b[0]), 1), 0.5);  // labels stay readable
    v.k = k;
    v.x = sz[0] / 2 - (b[0] + b[2]) / 2 * k;
    v.y = tall ? 40 - b[1] * k : sz[1] / 2 + 20 - (b[1] + b[3]) / 2 * k;
    render();
  }
  function focusNode(u) {
    var c = cur();
    if (!c || !c.g) return;
    state.selected = u;
    var v = view(), sz = size();
    if (v.k < 0.6) v.k = 0.9;
    v.x = sz[0] / 2 - c.g.x[u] * v.k;
    v.y = sz[1] / 2 - c.g.y[u] * v.k;
    showDetails();
    render();
    writeHash();
  }
  function render() {
    if (pending) return;
    pending = true;
    (window.requestAnimationFrame || function (f) { return setTimeout(f, 0); })(function () { pending = false; draw(); });
  }
  function visibleNodes(g, x0, y0, x1, y1) {
    var cx0 = Math.floor((x0 - W) / CELL), cx1 = Math.floor((x1 + W) / CELL);
    var cy0 = Math.floor((y0 - H) / CELL), cy1 = Math.floor((y1 + H) / CELL);
    var out = [];
    if ((cx1 - cx0 + 1) * (cy1 - cy0 + 1) > g._grid.size) {
      g._grid.forEach(function (cell) { for (var j = 0; j < cell.length; j++) out.push(cell[j]); });
    } else {
      for (var cx = cx0; cx <= cx1; cx++) for (var cy = cy0; cy <= cy1; cy++) {
        var cell = g._grid.get(cx + "," + cy);
        if (cell) for (var j = 0; j < cell.length; j++) out.push(cell[j]);
      }
    }
    return out;
  }
  function drawEdges(g, list, x0, y0, x1, y1, colour, dash, width) {
    ctx.beginPath();
    var X = g.x, Y = g.y;
    for (var k = 0; k < list.length; k += 2) {
      var s = list[k], d = list[k + 1];
      var ax = X[s], ay = Y[s] + H / 2, bx = X[d], by = Y[d] - H / 2;
      if ((ax < x0 && bx < x0) || (ax > x1 && bx > x1) || (ay < y0 && by < y0) || (ay > y1 && by > y1)) continue;
      ctx.moveTo(ax, ay); ctx.lineTo(bx, by);
    }
    ctx.strokeStyle = colour; ctx.setLineDash(dash); ctx.lineWidth = width;
    ctx.stroke();
  }
  function flat(list) {
    var out = [];
    for (var k = 0; k < list.length; k++) out.push(list[k][0], list[k][1]);
    return out;
  }
  function draw() {
    var start = (window.performance || Date).now();
    drawFrame();
    document.body.dataset.drawMs = String(Math.round((window.performance || Date).now() - start));
  }
  function drawFrame() {
    if (!canvas || !$("tab-graph").classList.contains("active")) return;
    var sz = size(), v = view(), c = cur();
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, sz[0], sz[1]);
    if (!c || !c.g) return;
    var g = c.g, snap = c.snap, k = v.k;
    ctx.setTransform(dpr * k, 0, 0, dpr * k, dpr * v.x, dpr * v.y);
    var x0 = -v.x / k, y0 = -v.y / k, x1 = x0 + sz[0] / k, y1 = y0 + sz[1] / k;
    var px = 1 / k;  // one screen pixel in world units
    Object.keys(EDGE).forEach(function (kind) {
      var e = EDGE[kind];
      drawEdges(g, snap.edges[kind], x0, y0, x1, y1, e[0], e[1].map(function (d) { return d * px; }), Math.max(e[2] * px, e[2]));
    });
    if (c.stage.diff) {
      drawEdges(g, flat(c.stage.diff.edges_added), x0, y0, x1, y1, STATUS.added, [], 3 * Math.max(px, 1));
      drawEdges(g, flat(c.stage.diff.edges_removed), x0, y0, x1, y1, REMOVED_EDGE, [2 * px, 4 * px], 3 * Math.max(px, 1));
    }
    ctx.setLineDash([]);
    var vis = visibleNodes(g, x0, y0, x1, y1), pos = c.pos, ghost = new Set(c.ghosts);
    var hit = new Set(state.hits), labels = k * W > 55, tiny = k * W < 6;
    if (labels) {
      ctx.textAlign = "center"; ctx.textBaseline = "middle";
    }
    for (var j = 0; j < vis.length; j++) {
      var u = vis[j], i = pos[u], isGhost = i < 0 && ghost.has(u);
      if (i < 0 && !isGhost) continue;
      var x = g.x[u] - W / 2, y = g.y[u] - H / 2;
      if (x > x1 || x + W < x0 || y > y1 || y + H < y0) continue;
      var st = isGhost ? "removed" : c.status.get(u);
      if (isGhost) {
        ctx.globalAlpha = 0.45;
        ctx.fillStyle = "#ffebe9";
      } else {
        ctx.fillStyle = g.fills[snap.stream[i]];
      }
      if (tiny) {
        ctx.fillRect(x, y, W, H);
        if (st || hit.has(u) || u === state.selected) {
          ctx.strokeStyle = u === state.selected ? "#000" : hit.has(u) ? "#8250df" : STATUS[st];
          ctx.lineWidth = 4 * px; ctx.strokeRect(x, y, W, H);
        }
        ctx.globalAlpha = 1;
        continue;
      }
      ctx.fillRect(x, y, W, H);
      ctx.lineWidth = (st ? 3 : 1) * px * (k < 1 ? 1 : k);
      if (isGhost) ctx.setLineDash([5 * px, 3 * px]);
      ctx.strokeStyle = st ? STATUS[st] : "#495057";
      ctx.strokeRect(x, y, W, H);
      ctx.setLineDash([]);
      if (hit.has(u)) { ctx.strokeStyle = "#8250df"; ctx.lineWidth = 3 * px; ctx.strokeRect(x - 4 * px, y - 4 * px, W + 8 * px, H + 8 * px); }
      if (u === state.selected) { ctx.strokeStyle = "#000"; ctx.lineWidth = 2.5 * px; ctx.strokeRect(x - 7 * px, y - 7 * px, W + 14 * px, H + 14 * px); }
      if (labels) {
        var src = isGhost ? prevSnapshot(c) : snap, at = isGhost ? (src ? src.nodes.indexOf(u) : -1) : i;
        var op = at >= 0 ? g.ops[src.op[at]] : "", name = at >= 0 ? nodeName(g, src, at) : g.keys[u];
        ctx.fillStyle = "#1f2328";
        ctx.font = "bold 11px Helvetica, Arial, sans-serif";
        ctx.fillText(clip(op), g.x[u], g.y[u] - 7);
        ctx.font = "11px Helvetica, Arial, sans-serif";
        ctx.fillText(clip(name), g.x[u], g.y[u] + 8);
      }
      ctx.globalAlpha = 1;
    }
  }
  function clip(s) { return s.length > 24 ? s.slice(0, 23) + "\u2026" : s; }
  function hitTest(sx, sy) {
    var c = cur();
    if (!c || !c.g) return -1;
    var v = view(), wx = (sx - v.x) / v.k, wy = (sy - v.y) / v.k, g = c.g;
    var near = visibleNodes(g, wx - 1, wy - 1, wx + 1, wy + 1), ghost = new Set(c.ghosts);
    var pad = Math.max(0, 4 / v.k - H / 2);
    for (var j = 0; j < near.length; j++) {
      var u = near[j];
      if (c.pos[u] < 0 && !ghost.has(u)) continue;
      if (Math.abs(g.x[u] - wx) <= W / 2 + pad && Math.abs(g.y[u] - wy) <= H / 2 + pad) return u;
    }
    return -1;
  }
  function setupCanvas() {
    canvas = $("canvas");
    ctx = canvas.getContext("2d");
    if (!ctx) return;
    var drag = null;
    canvas.addEventListener("mousedown", function (e) {
      var v = view();
      drag = { x: e.clientX, y: e.clientY, vx: v.x, vy: v.y, moved: false };
      canvas.classList.add("dragging");
    });
    window.addEventListener("mousemove", function (e) {
      if (!drag) return;
      var dx = e.clientX - drag.x, dy = e.clientY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
      var v = view();
      v.x = drag.vx + dx; v.y = drag.vy + dy;
      render();
    });
    window.addEventListener("mouseup", function (e) {
      if (!drag) return;
      canvas.classList.remove("dragging");
      if (!drag.moved) {
        var r = canvas.getBoundingClientRect();
        state.selected = hitTest(e.clientX - r.left, e.clientY - r.top);
        showDetails(); render(); writeHash();
      }
      drag = null;
    });
    canvas.addEventListener("wheel", function (e) {
      e.preventDefault();
      var r = canvas.getBoundingClientRect(), v = view();
      var sx = e.clientX - r.left, sy = e.clientY - r.top;
      if (e.ctrlKey || !e.shiftKey) {
        var f = Math.exp(-e.deltaY * 0.0015), k = Math.min(Math.max(v.k * f, 0.002), 4);
        v.x = sx - (sx - v.x) * k / v.k; v.y = sy - (sy - v.y) * k / v.k; v.k = k;
      } else { v.x -= e.deltaX; v.y -= e.deltaY; }
      render();
    }, { passive: false });
    window.addEventListener("resize", resize);
  }

  /* ---- findings, profile, run ---- */
  function nodeLink(finding, name) {
    var a = el("a", "node-link", name);
    a.addEventListener("click", function () { goTo(finding.graph, finding.stage, name); });
    return a;
  }
  function goTo(graphId, stageName, nodeName_) {
    var gk = graphs.findIndex(function (gr) { return gr.id === graphId; });
    if (gk < 0) gk = state.graph;
    showTab("graph");
    if (gk !== state.graph) selectGraph(gk);
    var sk = graphs[gk] ? graphs[gk].stages.findIndex(function (s) { return s.name === stageName; }) : -1;
    if (sk >= 0) selectStage(sk);
    if (nodeName_) selectByName(nodeName_);
  }
  function selectByName(name) {
    var c = cur();
    if (!c || !c.g) return false;
    for (var i = 0; i < c.snap.nodes.length; i++) {
      if (nodeName(c.g, c.snap, i) === name) { focusNode(c.snap.nodes[i]); return true; }
    }
    return false;
  }
  function buildFindings() {
    var box = $("findings"), list = data.findings || [];
    clear(box);
    $("tab-btn-findings").textContent = "Findings (" + list.length + ")";
    if (!list.length) { box.appendChild(el("p", "muted", "The verifier found nothing in this run.")); return; }
    var t = el("table", "grid"), head = el("tr");
    ["severity", "rule", "graph", "stage", "nodes", "message", "source"].forEach(function (h) { head.appendChild(el("th", null, h)); });
    t.appendChild(head);
    list.forEach(function (f) {
      var tr = el("tr", "finding");
      tr.appendChild(el("td", "sev-" + f.severity, f.severity));
      tr.appendChild(el("td", null, (f.rule || "") + (f.ref ? " (" + f.ref + ")" : "")));
      tr.appendChild(el("td", null, f.graph));
      tr.appendChild(el("td", null, f.stage));
      var td = el("td");
      (f.nodes || []).slice(0, 20).forEach(function (n) { td.appendChild(nodeLink(f, n)); });
      tr.appendChild(td);
      var msg = el("td", null, f.message);
      if (f.hint) { msg.appendChild(el("div", "muted", "hint: " + f.hint)); }
      tr.appendChild(msg);
      tr.appendChild(el("td", null, f.source));
      t.appendChild(tr);
    });
    box.appendChild(t);
  }
  function dur(x) {
    if (typeof x !== "number" || !isFinite(x)) return fmt(x);
    var a = Math.abs(x);
    if (a >= 1) return x.toFixed(3) + " s";
    if (a >= 1e-3) return (x * 1e3).toFixed(a >= 0.1 ? 1 : 2) + " ms";
    if (a > 0) return (x * 1e6).toFixed(1) + " \u00b5s";
    return "0";
  }
  function table(headers, rows) {
    var t = el("table", "grid"), head = el("tr");
    headers.forEach(function (h) { head.appendChild(el("th", null, h)); });
    t.appendChild(head);
    rows.forEach(function (cells) {
      var tr = el("tr");
      cells.forEach(function (c) { tr.appendChild(el("td", null, c === null || c === undefined ? "" : String(c))); });
      t.appendChild(tr);
    });
    return t;
  }
  function buildProfile() {
    var p = data.profile, box = $("profile");
    if (!p) { $("tab-btn-profile").style.display = "none"; return; }
    var tl = $("timeline");
    clear(box);
    if (p.error) { box.appendChild(el("p", "sev-error", p.error)); }
    if (Array.isArray(p.streams)) {
      box.appendChild(el("h2", null, "Streams (median step)"));
      box.appendChild(table(["stream", "busy", "idle", "busy %", "ops", "longest gap"], p.streams.map(function (s) {
        return [s.stream, dur(s.busy_s), dur(s.idle_s),
                typeof s.busy_pct === "number" ? s.busy_pct.toFixed(1) : "", s.ops, dur(s.largest_gap_s)];
      })));
    }
    var facts = [];
    if (p.overlap_s !== undefined) facts.push("overlap between streams: " + dur(p.overlap_s));
    if (p.span_s !== undefined) facts.push("op span: " + dur(p.span_s));
    if (p.step_s !== undefined) facts.push("step time: " + dur(p.step_s));
    if (facts.length) box.appendChild(el("p", null, facts.join(" \u00b7 ")));
    if (Array.isArray(p.critical_path)) {
      box.appendChild(el("h2", null, "Critical path" + (p.critical_path_s !== undefined ? " (" + dur(p.critical_path_s) + " of work)" : "")));
      box.appendChild(table(["node", "op", "stream", "time", "reached by", "source"], p.critical_path.map(function (c) {
        return [c.node, c.op, c.stream, dur(c.dur_s), c.via, c.source];
      })));
    } else if (p.critical_path !== undefined) {
      box.appendChild(el("pre", "pre", JSON.stringify(p.critical_path, null, 1)));
    }
    if (Array.isArray(p.top_ops) && p.top_ops.length) {
      box.appendChild(el("h2", null, "Top ops (per step)"));
      box.appendChild(table(["op", "calls", "total", "mean"], p.top_ops.slice(0, 15).map(function (o) {
        return [o.op, o.count, dur(o.total_s), dur(o.mean_s)];
      })));
    }
    if (p.races !== undefined) {
      var races = Array.isArray(p.races) ? p.races : [p.races];
      box.appendChild(el("h2", races.length ? "sev-error" : null, "Races (" + races.length + ")"));
      if (races.length) {
        box.appendChild(table(["reader", "stream", "source", "reads", "stream", "source"], races.map(function (r) {
          return typeof r === "object" && r ? [r.reader, r.reader_stream, r.reader_source, r.producer, r.producer_stream, r.producer_source]
                                            : [String(r), "", "", "", "", ""];
        })));
      }
    }
    if (p.trace) box.appendChild(el("p", null, "Trace (open in https://ui.perfetto.dev): " + fmt(p.trace)));
    if (tl) box.appendChild(tl);
  }
  function buildRun() {
    var box = $("run"), run = data.run || {};
    clear(box);
    var t = el("table", "grid");
    Object.keys(run).forEach(function (k) {
      var tr = el("tr");
      tr.appendChild(el("th", null, k));
      var v = run[k], td = el("td");
      if (v !== null && typeof v === "object") td.appendChild(el("pre", "pre", JSON.stringify(v, null, 1)));
      else td.textContent = fmt(v);
      tr.appendChild(td);
      t.appendChild(tr);
    });
    box.appendChild(t);
  }

  /* ---- URL hash ---- */
  function readHash() {
    var out = {};
    (location.hash || "").replace(/^#/, "").split("&").forEach(function (kv) {
      if (!kv) return;
      var p = kv.indexOf("="), k = p < 0 ? kv : kv.slice(0, p), v = p < 0 ? "" : kv.slice(p + 1);
      try { out[decodeURIComponent(k)] = decodeURIComponent(v.replace(/\+/g, " ")); } catch (e) { /* ignore */ }
    });
    return out;
  }
  var hashReady = false;
  function writeHash() {
    if (!hashReady || !history.replaceState) return;
    var gr = graphs[state.graph], parts = [];
    if (gr) parts.push("graph=" + encodeURIComponent(gr.id));
    if (gr && gr.stages[state.stage]) parts.push("stage=" + gr.stages[state.stage].index);
    if (state.search) parts.push("search=" + encodeURIComponent(state.search));
    var c = cur();
    if (c && c.g && state.selected >= 0) parts.push("node=" + encodeURIComponent(c.g.keys[state.selected]));
    try { history.replaceState(null, "", "#" + parts.join("&")); } catch (e) { /* file:// may refuse */ }
  }

  /* ---- start ---- */
  function start() {
    buildHeader();
    setupCanvas();
    var tabs = document.querySelectorAll("nav.tabs button");
    for (var i = 0; i < tabs.length; i++) {
      tabs[i].addEventListener("click", function (e) { showTab(e.currentTarget.dataset.tab); });
    }
    $("show-all").addEventListener("change", function (e) { state.showAll = e.target.checked; buildStageList(); });
    var search = $("search");
    search.addEventListener("input", function () { state.search = search.value; runSearch(false); writeHash(); });
    search.addEventListener("keydown", function (e) {
      if (e.key === "Enter" && state.hits.length) {
        state.hitAt = (state.hitAt + 1) % state.hits.length;
        focusNode(state.hits[state.hitAt]);
      }
    });
    $("fit").addEventListener("click", function () { fit(true); });
    document.addEventListener("keydown", function (e) {
      var tag = (e.target && e.target.tagName) || "";
      if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") return;
      if (e.key === "ArrowDown" || e.key === "j") { stepStage(1); e.preventDefault(); }
      else if (e.key === "ArrowUp" || e.key === "k") { stepStage(-1); e.preventDefault(); }
      else if (e.key === "/") { search.focus(); e.preventDefault(); }
      else if (e.key === "f") { fit(true); }
    });
    buildFindings(); buildProfile(); buildRun();
    var h = readHash();
    if (h.graph !== undefined) {
      var gk = graphs.findIndex(function (gr) { return gr.id === h.graph; });
      state.graph = gk >= 0 ? gk : Math.min(Math.max(parseInt(h.graph, 10) || 0, 0), Math.max(graphs.length - 1, 0));
    }
    if (h.all === "1") { state.showAll = true; $("show-all").checked = true; }
    buildGraphSelect();
    showTab(h.tab || "graph");
    resize();
    selectGraph(state.graph);
    if (h.stage !== undefined && graphs[state.graph]) {
      var st = graphs[state.graph].stages;
      var sk = st.findIndex(function (s) { return s.name === h.stage; });
      if (sk < 0) sk = st.findIndex(function (s) { return String(s.index) === h.stage; });
      if (sk >= 0) selectStage(sk);
    }
    buildLegend();
    if (h.search) { search.value = h.search; state.search = h.search; runSearch(true); }
    if (h.node) selectByName(h.node);
    if (h.view === "all") fit(true);
    hashReady = true;
    document.body.dataset.parseMs = String(Math.round(parseMs));
    document.body.dataset.readyMs = String(Math.round((window.performance || Date).now() - t0));
    document.body.dataset.ready = "1";
  }
  start();
})();
