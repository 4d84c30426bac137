/* airctl report viewer: the payload, shared state and helpers every other file uses.
 *
 * The viewer is airctl's own code, no libraries. airctl/report/page.py inlines the files of this
 * folder, in a fixed order, into one function scope of report.html's single script: they share
 * this scope (functions and the variables declared here), and start.js, the last one, starts it.
 * The payload is the JSON text `dataText` the page's loader hands this scope (read from the
 * "airctl-data" script element, inflated first when the page stored it gzip+base64); graph contents
 * are written only through textContent and the canvas, never as markup.
 */
  var t0 = (window.performance || Date).now();
  var data = JSON.parse(dataText);
  var parseMs = (window.performance || Date).now() - t0;
  var W = 150, H = 34, CELL = 600;
  var EDGE = (data.style && data.style.edges) || {};  // kind -> [colour, dash, width], from airctl/render/style.py
  var STATUS = { added: "#1a7f37", removed: "#cf222e", changed: "#e36209" };
  var SEV = { error: "#cf222e", warning: "#bf8700", info: "#0969da" };  // finding severities

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

  var state = { graph: 0, stage: -1, showAll: false, search: "", hits: [], hitAt: -1, selected: -1, probe: false,
                finding: null, expanded: new Set(), expandedVer: 0, source: null };
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
  /* the details of node i of snap: a plain op's are stored as its input list alone (report/node_data.py) */
  function nodeDetails(g, snap, i) {
    var d = g.details[snap.det[i]];
    if (Array.isArray(d)) return d.length ? { kind: "op", inputs: d } : { kind: "op" };
    return d || {};
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
    var marks = diffMarks(g, st);
    return { graph: gr, stage: st, g: g, snap: g.snapshots[st.snap], pos: snapPos(g, st.snap), status: marks.status,
             ghosts: marks.ghosts };
  }
  function visibleStage(st) { return state.showAll || st.changed !== false; }
  /* union indices of the nodes of the finding last clicked in the Findings tab, in the current stage */
  function findingNodes(c) {
    var snap = c.snap;
    if (snap._findingOf === state.finding) return snap._finding;
    var out = new Set();
    if (state.finding) {
      var names = new Set(state.finding.nodes || []);
      for (var i = 0; i < snap.nodes.length; i++) if (names.has(nodeName(c.g, snap, i))) out.add(snap.nodes[i]);
    }
    snap._findingOf = state.finding; snap._finding = out;
    return out;
  }
