/* #probe=1: what each pane drew, written into a hidden <div id="probe"> after every frame, so that
 * tools and the headless-browser tests can check the picture from element positions (a canvas has
 * no elements). Per shown pane, a <div data-pane="graph|lanes"> holding, in CSS pixels relative to
 * the pane's canvas: <i> per node in view (data-name, -x, -y, -w, -h; lanes: -lane, -run), <b> per
 * stream scope band (data-stream, -x, -y, -w, -h), <e> per order/sync edge between nodes in view
 * (data-kind, -from, -to), and in the lane pane <l> per lane (data-lane, -stream), <a> per arrow
 * (data-kind sync|race, -from, -to) and <m> per finding mark (data-name, -rule, -severity, -primary).
 * A node's <i> has data-selected="1" when selected, data-focus="1" when it belongs to the finding
 * opened from the Findings tab. At most PROBE_MAX nodes per pane. The box itself says how many
 * frames wrote it (data-frame) and, when a frame drew no pane, why (data-empty).
 */
  var PROBE_MAX = 2000;
  function probeItem(host, tag, attrs) {
    var e = document.createElement(tag);
    Object.keys(attrs).forEach(function (k) {
      var val = attrs[k];
      e.setAttribute("data-" + k, typeof val === "number" ? String(Math.round(val * 10) / 10) : String(val));
    });
    host.appendChild(e);
  }
  function probeBox(v, x, y, w, h) { return { x: v.x + x * v.k, y: v.y + y * v.k, w: w * v.k, h: h * v.k }; }
  function withBox(attrs, box) { Object.keys(box).forEach(function (k) { attrs[k] = box[k]; }); return attrs; }
  function flags(attrs, c, u, focus) {
    if (u === state.selected) attrs.selected = 1;
    if (focus.has(u)) attrs.focus = 1;
    return attrs;
  }
  function streamName(g, s) { return g.streams[s] === null ? "default stream" : String(g.streams[s]); }
  function probeGraph(host, c, v, sz) {
    var g = c.g, x0 = -v.x / v.k, y0 = -v.y / v.k, x1 = x0 + sz[0] / v.k, y1 = y0 + sz[1] / v.k, seen = new Set();
    var focus = findingNodes(c);
    visibleNodes(g, x0, y0, x1, y1).slice(0, PROBE_MAX).forEach(function (u) {
      var i = c.pos[u];
      if (i < 0) return;
      seen.add(u);
      probeItem(host, "i", withBox(flags({ name: nodeName(g, c.snap, i) }, c, u, focus),
                                   probeBox(v, g.x[u] - W / 2, g.y[u] - H / 2, W, H)));
    });
    graphBands(c).forEach(function (b) {
      probeItem(host, "b", withBox({ stream: streamName(g, b[4]) }, probeBox(v, b[0], b[1], b[2] - b[0], b[3] - b[1])));
    });
    ["order", "sync", "control"].forEach(function (kind) {
      var list = c.snap.edges[kind] || [];
      for (var k = 0; k < list.length; k += 2) {
        if (!seen.has(list[k]) || !seen.has(list[k + 1])) continue;
        probeItem(host, "e", { kind: kind, from: nodeName(g, c.snap, c.pos[list[k]]), to: nodeName(g, c.snap, c.pos[list[k + 1]]) });
      }
    });
  }
  function probeLanes(host, c, v, sz) {
    var G = laneGeom(c), L = c.snap.lanes, g = c.g;
    if (!G) return;
    var y0 = -v.y / v.k, y1 = y0 + sz[1] / v.k, focus = findingNodes(c);
    L.streams.forEach(function (s, k) { probeItem(host, "l", { lane: k, stream: streamName(g, s) }); });
    laneItemsIn(G, y0, y1).slice(0, PROBE_MAX).forEach(function (it) {
      var attrs = flags({ name: nodeName(g, c.snap, it.i), lane: it.lane, stream: streamName(g, L.streams[it.lane]) },
                        c, c.snap.nodes[it.i], focus);
      if (it.run >= 0) {
        attrs.run = L.runs[it.run][2].length;
        if (L.runs[it.run][2].some(function (m) { return c.snap.nodes[m] === state.selected; })) attrs.selected = 1;
      }
      probeItem(host, "i", withBox(attrs, probeBox(v, laneX(it.lane) + 8, it.y + (RH - BH) / 2, LW - 16, BH)));
    });
    L.bands.forEach(function (b) {
      var y = G.ry[b[1]] - 1, h = G.ry[b[2] + 1] - G.ry[b[1]] + 2;
      probeItem(host, "b", withBox({ stream: streamName(g, L.streams[b[0]]) }, probeBox(v, laneX(b[0]) + 3, y, LW - 6, h)));
    });
    [["sync", L.arrows], ["race", L.races]].forEach(function (a) {
      for (var k = 0; k < a[1].length; k += 2) {
        probeItem(host, "a", { kind: a[0], from: nodeName(g, c.snap, a[1][k]), to: nodeName(g, c.snap, a[1][k + 1]) });
      }
    });
    L.marks.forEach(function (m) {
      probeItem(host, "m", { name: nodeName(g, c.snap, m[0]), severity: m[1], rule: m[2], primary: m[4] });
    });
  }
  function writeProbe(c) {
    var box = $("probe");
    if (!box) { box = el("div"); box.id = "probe"; box.hidden = true; document.body.appendChild(box); }
    clear(box);
    box.setAttribute("data-frame", String((parseInt(box.getAttribute("data-frame"), 10) || 0) + 1));
    box.removeAttribute("data-empty");
    if (!c || !c.g) { box.setAttribute("data-empty", c && c.stage ? "snapshot missing" : "no stage"); return; }
    var drawn = 0;
    panes.forEach(function (p) {
      if (!shown(p)) return;
      if (!p.ctx) { box.setAttribute("data-empty", "no 2d context for " + p.name); return; }
      drawn++;
      var host = el("div"), sz = paneSize(p);
      host.setAttribute("data-pane", p.name);
      host.setAttribute("data-width", String(Math.round(sz[0])));
      host.setAttribute("data-height", String(Math.round(sz[1])));
      (p.name === "graph" ? probeGraph : probeLanes)(host, c, paneView(p), sz);
      box.appendChild(host);
    });
    if (!drawn && !box.hasAttribute("data-empty")) box.setAttribute("data-empty", "no pane shown (" + paneMode + ")");
  }
