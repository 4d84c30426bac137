/* Drawing one frame: edges by kind, then the nodes in view with their fills, diff and search
 * marks, and labels once they are large enough to read.
 */
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
    drawDiffEdges(c, g, x0, y0, x1, y1, px);
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
