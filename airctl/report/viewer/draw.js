/* The graph pane: the stage's graph in its group's layout. One frame: stream scopes as bands, edges
 * by kind (order edges light, under the others), then the nodes in view (found through the
 * group's grid) with their fills, diff, search and finding marks (the op a finding of the verifier
 * is about outlined in its severity's colour; the finding clicked in the Findings tab haloed in
 * red), and labels once large enough.
 */
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
  function graphHit(p, c, wx, wy) {
    var g = c.g, v = paneView(p);
    var near = visibleNodes(g, wx - 1, wy - 1, wx + 1, wy + 1), ghost = new Set(c.ghosts);
    var pad = Math.max(0, 4 / v.k - H / 2);
    for (var j = 0; j < near.length; j++) {
      var u = near[j];
      if (c.pos[u] < 0 && !ghost.has(u)) continue;
      if (Math.abs(g.x[u] - wx) <= W / 2 + pad && Math.abs(g.y[u] - wy) <= H / 2 + pad) return u;
    }
    return -1;
  }
  /* stream scopes of the snapshot as boxes around their nodes: [x0, y0, x1, y1, stream index] */
  function graphBands(c) {
    var snap = c.snap, L = snap.lanes;
    if (snap._bands) return snap._bands;
    var out = [];
    if (L && L.bands.length) {
      L.bands.forEach(function (b) {
        var end = b[4] >= 0 ? b[4] : L.lane.length - 1, box = [Infinity, Infinity, -Infinity, -Infinity];
        for (var i = b[3]; i <= end; i++) {
          if (L.lane[i] !== b[0]) continue;
          var u = snap.nodes[i], x = c.g.x[u], y = c.g.y[u];
          if (x < box[0]) box[0] = x; if (x > box[2]) box[2] = x;
          if (y < box[1]) box[1] = y; if (y > box[3]) box[3] = y;
        }
        if (box[0] <= box[2]) out.push([box[0] - W / 2 - 10, box[1] - H / 2 - 10, box[2] + W / 2 + 10, box[3] + H / 2 + 10, L.streams[b[0]]]);
      });
    }
    snap._bands = out;
    return out;
  }
  function drawEdges(ctx, g, list, x0, y0, x1, y1, colour, dash, width) {
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
  function drawGraph(p, c, v, view) {
    var ctx = p.ctx, g = c.g, snap = c.snap, k = v.k;
    var x0 = view[0], y0 = view[1], x1 = view[2], y1 = view[3];
    var px = 1 / k;  // one screen pixel in world units
    graphBands(c).forEach(function (b) {
      ctx.globalAlpha = 0.3; ctx.fillStyle = g.fills[b[4]];
      ctx.fillRect(b[0], b[1], b[2] - b[0], b[3] - b[1]);
      ctx.globalAlpha = 1; ctx.strokeStyle = "#495057"; ctx.lineWidth = px; ctx.setLineDash([5 * px, 3 * px]);
      ctx.strokeRect(b[0], b[1], b[2] - b[0], b[3] - b[1]);
    });
    ["order"].concat(Object.keys(EDGE).filter(function (kind) { return kind !== "order"; })).forEach(function (kind) {
      var e = EDGE[kind];
      if (!e || !snap.edges[kind]) return;
      drawEdges(ctx, g, snap.edges[kind], x0, y0, x1, y1, e[0], e[1].map(function (d) { return d * px; }), Math.max(e[2] * px, e[2]));
    });
    drawDiffEdges(ctx, c, g, x0, y0, x1, y1, px);
    ctx.setLineDash([]);
    var vis = visibleNodes(g, x0, y0, x1, y1), pos = c.pos, ghost = new Set(c.ghosts);
    var hit = new Set(state.hits), labels = k * W > 55, tiny = k * W < 6, marked = findingNodes(c);
    var lmarks = snap.lanes ? marksOf(c) : null;  // the verifier's findings: the ops they are about outlined
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
      if (marked.has(u)) { ctx.fillStyle = "#cf222e"; ctx.fillRect(x - 5 * px, y - 5 * px, W + 10 * px, H + 10 * px); ctx.fillStyle = g.fills[snap.stream[i]]; }
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
      var mk = i >= 0 && lmarks ? lmarks.get(i) : null, sev = mk && mk.some(function (m) { return m[4]; }) ? mk[0][1] : null;
      ctx.lineWidth = (st || sev ? 3 : 1) * px * (k < 1 ? 1 : k);
      if (isGhost) ctx.setLineDash([5 * px, 3 * px]);
      ctx.strokeStyle = st ? STATUS[st] : sev ? SEV[sev] || "#495057" : "#495057";
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
  var graphPane = addPane({
    name: "graph", id: "canvas",
    key: function (c) { return c.stage.group; },
    bounds: function (c) { return c.g._bounds; },
    at: function (c, u) { return [c.g.x[u], c.g.y[u]]; },
    hit: graphHit, draw: drawGraph
  });
