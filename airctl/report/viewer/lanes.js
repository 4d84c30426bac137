/* The lane pane: the stage's stream plan as lanes (airctl/render/lanes.py computes it; the payload
 * holds it per snapshot, see airctl/report/lanes_data.py). One column per stream, a row per step in
 * program order, scopes as bands, record -> wait arrows across lanes, findings of the verifier
 * outlined (red: error) with a "!" on the op they are about, racy reads as dotted arrows. A folded
 * run (big graphs) is one box; clicking it unfolds it in place, "fold" folds every run back.
 */
  var LW = 250, LG = 28, RH = 26, BH = 20, LTOP = 64;
  var SYM = { scope_enter: "\u25b6", scope_exit: "\u25a0", record: "\u25cf", wait: "\u25c6", tagged_event_record: "\u25cf",
              tagged_event_wait: "\u25c6" };
  function laneX(k) { return k * (LW + LG); }
  function symbolOf(op) {
    if (op === "output") return "\u23cf";
    if (op.slice(0, 4) !== "air.") return "";
    return SYM[op.split(".")[1]] || "";
  }
  function runKey(c, k) { return c.stage.group + ":" + c.stage.snap + ":" + k; }
  /* where everything sits with the current unfolded runs: rows' y, boxes sorted by y, node centres */
  function laneGeom(c) {
    var snap = c.snap, L = snap.lanes;
    if (!L) return null;
    if (snap._lg && snap._lg.ver === state.expandedVer) return snap._lg;
    var runs = L.runs || [], open = [], extra = new Int32Array(L.rows + 1);
    runs.forEach(function (r, k) {
      open[k] = state.expanded.has(runKey(c, k));
      if (open[k]) extra[r[1]] = Math.max(extra[r[1]], r[2].length - 1);
    });
    var ry = new Float64Array(L.rows + 1), acc = 0;
    for (var r = 0; r <= L.rows; r++) { ry[r] = LTOP + (r + acc) * RH; acc += extra[r]; }
    var n = L.lane.length, cx = new Float64Array(n).fill(NaN), cy = new Float64Array(n).fill(NaN), items = [];
    for (var i = 0; i < n; i++) {
      var k = L.lane[i];
      if (k < 0) continue;
      var rk = L.run ? L.run[i] : -1, y = ry[L.row[i]];
      if (rk >= 0 && !open[rk]) continue;
      if (rk >= 0) y += runs[rk][2].indexOf(i) * RH;
      items.push({ i: i, run: -1, lane: k, y: y });
      cx[i] = laneX(k) + LW / 2; cy[i] = y + RH / 2;
    }
    runs.forEach(function (rn, k) {
      if (open[k]) return;
      var y = ry[rn[1]];
      items.push({ i: rn[2][0], run: k, lane: rn[0], y: y });
      rn[2].forEach(function (m) { cx[m] = laneX(rn[0]) + LW / 2; cy[m] = y + RH / 2; });
    });
    items.sort(function (a, b) { return a.y - b.y; });
    var bottom = ry[L.rows] + RH;
    snap._lg = { ver: state.expandedVer, ry: ry, items: items, cx: cx, cy: cy, open: open,
                 bounds: [-10, 0, laneX(L.streams.length) - LG + 10, bottom] };
    return snap._lg;
  }
  function marksOf(c) {
    var L = c.snap.lanes;
    if (L._marks) return L._marks;
    var m = new Map();
    L.marks.forEach(function (mk) { if (!m.has(mk[0])) m.set(mk[0], []); m.get(mk[0]).push(mk); });
    L._marks = m;
    return m;
  }
  function firstAtOrAfter(items, y) {  // binary search: the first item whose top is >= y
    var lo = 0, hi = items.length;
    while (lo < hi) { var mid = (lo + hi) >> 1; if (items[mid].y < y) lo = mid + 1; else hi = mid; }
    return lo;
  }
  function laneItemsIn(G, y0, y1) {
    var out = [];
    for (var j = firstAtOrAfter(G.items, y0 - RH); j < G.items.length && G.items[j].y <= y1; j++) out.push(G.items[j]);
    return out;
  }
  function laneHitItem(c, wx, wy) {
    var G = laneGeom(c);
    if (!G) return null;
    var near = laneItemsIn(G, wy - RH, wy);
    for (var j = 0; j < near.length; j++) {
      var it = near[j], x = laneX(it.lane);
      if (wx >= x && wx <= x + LW && wy >= it.y && wy <= it.y + RH) return it;
    }
    return null;
  }
  function laneClick(p, c, wx, wy) {
    var it = laneHitItem(c, wx, wy);
    if (!it || it.run < 0) return false;
    state.expanded.add(runKey(c, it.run)); state.expandedVer++;
    state.selected = c.snap.nodes[it.i];
    showDetails(); writeHash(); updateFold();
    return true;
  }
  function foldAll() { state.expanded.clear(); state.expandedVer++; updateFold(); render(); }
  function updateFold() {
    var c = cur(), L = c && c.snap && c.snap.lanes;
    $("fold").style.display = L && L.runs && L.runs.length && paneMode !== "graph" ? "" : "none";
  }
  function laneArrow(ctx, G, L, s, d) {
    var ls = L.lane[s], ld = L.lane[d];
    if (ls < 0 || ld < 0 || isNaN(G.cy[s]) || isNaN(G.cy[d])) return;
    var ys = G.cy[s], yd = G.cy[d];
    ctx.moveTo(ls === ld ? laneX(ls) + LW - 10 : laneX(ls) + (ld > ls ? LW - 28 : 28), ys);
    if (ls === ld) { var x = laneX(ls) + LW - 10; ctx.bezierCurveTo(x + 30, ys, x + 30, yd, x, yd); return; }
    var xd = laneX(ld) + (ld > ls ? 28 : LW - 28);
    ctx.lineTo(xd, yd);
    var a = Math.atan2(yd - ys, xd - laneX(ls) - (ld > ls ? LW - 28 : 28));
    ctx.moveTo(xd, yd); ctx.lineTo(xd - 8 * Math.cos(a - 0.4), yd - 8 * Math.sin(a - 0.4));
    ctx.moveTo(xd, yd); ctx.lineTo(xd - 8 * Math.cos(a + 0.4), yd - 8 * Math.sin(a + 0.4));
  }
  function drawLanes(p, c, v, view) {
    var ctx = p.ctx, L = c.snap.lanes, g = c.g, G = laneGeom(c), px = 1 / v.k;
    if (!G) return;
    var bottom = G.bounds[3];
    L.streams.forEach(function (s, k) {
      ctx.fillStyle = "#f6f8fa"; ctx.fillRect(laneX(k), LTOP - 8, LW, bottom - LTOP + 8);
      ctx.strokeStyle = "#d0d7de"; ctx.lineWidth = px; ctx.setLineDash([]); ctx.strokeRect(laneX(k), LTOP - 8, LW, bottom - LTOP + 8);
    });
    var fillsBy = L.streams.map(function () { return new Path2D(); }), outline = new Path2D();
    L.bands.forEach(function (b) {  // one path per lane and one for the outlines: thousands of scopes stay cheap
      var y = G.ry[b[1]] - 1, h = G.ry[b[2] + 1] - G.ry[b[1]] + 2;
      if (y > view[3] || y + h < view[1]) return;
      fillsBy[b[0]].rect(laneX(b[0]) + 3, y, LW - 6, h);
      outline.rect(laneX(b[0]) + 3, y, LW - 6, h);
    });
    ctx.globalAlpha = 0.45;
    L.streams.forEach(function (s, k) { ctx.fillStyle = g.fills[s]; ctx.fill(fillsBy[k]); });
    ctx.globalAlpha = 1; ctx.strokeStyle = "#495057"; ctx.lineWidth = px; ctx.setLineDash([5 * px, 3 * px]);
    ctx.stroke(outline);
    ctx.setLineDash([]);
    var items = laneItemsIn(G, view[1], view[3]), marks = marksOf(c), labels = v.k * LW > 90, hit = new Set(state.hits);
    var focus = findingNodes(c);
    ctx.textBaseline = "middle"; ctx.textAlign = "left";
    if (v.k * RH < 3) { drawTiny(ctx, c, items, marks); items = []; }  // far out: colour only, marks on top
    items.forEach(function (it) {
      var i = it.i, u = c.snap.nodes[i], op = g.ops[c.snap.op[i]], sym = it.run < 0 ? symbolOf(op) : "";
      var x = laneX(it.lane) + 8, y = it.y + (RH - BH) / 2, w = LW - 16;
      if (sym) { x += 24; w -= 48; }
      if (x > view[2] || x + w < view[0]) return;
      var mk = it.run < 0 ? marks.get(i) : null, primary = mk && mk.some(function (m) { return m[4]; });
      var sev = mk ? mk.map(function (m) { return m[1]; }).sort(function (a, b) { return Object.keys(SEV).indexOf(a) - Object.keys(SEV).indexOf(b); })[0] : null;
      if (focus.has(u) || (it.run >= 0 && L.runs[it.run][2].some(function (m) { return focus.has(c.snap.nodes[m]); }))) {
        ctx.fillStyle = "#cf222e"; ctx.fillRect(x - 5, y - 4, w + 10, BH + 8);
      }
      ctx.fillStyle = sym ? "#ffffff" : g.fills[L.streams[it.lane]];
      ctx.fillRect(x, y, w, BH);
      var st = c.status.get(u);
      ctx.lineWidth = sev ? (primary ? 3 : 2) * Math.max(px, 1) : (st ? 3 * Math.max(px, 1) : px);
      ctx.setLineDash(it.run >= 0 || (sev && !primary) ? [3 * Math.max(px, 1), 2 * Math.max(px, 1)] : []);
      ctx.strokeStyle = sev ? SEV[sev] || "#495057" : st ? STATUS[st] : "#495057";
      ctx.strokeRect(x, y, w, BH);
      ctx.setLineDash([]);
      if (hit.has(u) && it.run < 0) { ctx.strokeStyle = "#8250df"; ctx.lineWidth = 3 * px; ctx.strokeRect(x - 3, y - 3, w + 6, BH + 6); }
      if (u === state.selected) { ctx.strokeStyle = "#000"; ctx.lineWidth = 2.5 * Math.max(px, 1); ctx.strokeRect(x - 5, y - 4, w + 10, BH + 8); }
      var tx = x + 6;
      if (primary) {
        ctx.fillStyle = SEV[sev] || "#cf222e"; ctx.beginPath(); ctx.arc(x + 10, y + BH / 2, 7, 0, 2 * Math.PI); ctx.fill();
        if (labels) { ctx.fillStyle = "#fff"; ctx.font = "bold 11px Helvetica, Arial, sans-serif"; ctx.fillText("!", x + 8, y + BH / 2); }
        tx += 16;
      }
      if (!labels) return;
      var text = it.run >= 0 ? L.runs[it.run][3] : (sym ? sym + " " : "") + nodeName(g, c.snap, i);
      ctx.fillStyle = "#1f2328"; ctx.font = (it.run >= 0 ? "" : "bold ") + "11px Helvetica, Arial, sans-serif";
      var room = Math.floor((x + w - tx - 4) / 6.2);
      ctx.fillText(text.length > room ? text.slice(0, room - 1) + "\u2026" : text, tx, y + BH / 2);
      if (it.run < 0 && !sym && text.length + 3 < room) {
        var tw = ctx.measureText(text).width;
        ctx.font = "11px Helvetica, Arial, sans-serif"; ctx.fillStyle = "#57606a";
        var rest = room - text.length - 1;
        ctx.fillText(op.length > rest ? op.slice(0, rest - 1) + "\u2026" : op, tx + tw + 6, y + BH / 2);
      }
    });
    [[L.arrows, EDGE.sync ? EDGE.sync[0] : "#d62728", [5, 3]], [L.races, "#cf222e", [2, 3]]].forEach(function (a) {
      if (!a[0].length) return;
      ctx.beginPath();
      for (var k = 0; k < a[0].length; k += 2) {
        var ys = G.cy[a[0][k]], yd = G.cy[a[0][k + 1]];
        if ((ys < view[1] && yd < view[1]) || (ys > view[3] && yd > view[3])) continue;
        laneArrow(ctx, G, L, a[0][k], a[0][k + 1]);
      }
      ctx.strokeStyle = a[1]; ctx.lineWidth = 1.6 * Math.max(px, 1); ctx.setLineDash(a[2].map(function (d) { return d * Math.max(px, 1); }));
      ctx.stroke();
    });
    ctx.setLineDash([]);
    // lane headers stay at the top of the pane, over a white strip (the toolbar floats above it)
    ctx.setTransform(p.dpr, 0, 0, p.dpr, 0, 0);
    ctx.fillStyle = "rgba(255,255,255,0.92)"; ctx.fillRect(0, 0, paneSize(p)[0], 58);
    L.streams.forEach(function (s, k) {
      var hx = v.x + laneX(k) * v.k, hw = LW * v.k, name = g.streams[s] === null ? "default stream" : String(g.streams[s]);
      ctx.fillStyle = g.fills[s]; ctx.fillRect(hx, 34, hw, 20);
      ctx.strokeStyle = "#495057"; ctx.lineWidth = 1; ctx.strokeRect(hx, 34, hw, 20);
      ctx.fillStyle = "#1f2328"; ctx.font = "bold 11px Helvetica, Arial, sans-serif"; ctx.textBaseline = "middle";
      var room = Math.max(Math.floor((hw - 8) / 6.5), 0);
      ctx.fillText(name.length > room ? name.slice(0, Math.max(room - 1, 0)) + "\u2026" : name, hx + 4, 44);
    });
  }
  /* rows thinner than 3 px: one fill per box in its lane's colour (no outlines or text), then the
   * marked, selected and haloed nodes drawn again in red / black so they stay visible */
  function drawTiny(ctx, c, items, marks) {
    var L = c.snap.lanes, g = c.g, focus = findingNodes(c);
    var paths = L.streams.map(function () { return new Path2D(); });
    for (var j = 0; j < items.length; j++) paths[items[j].lane].rect(laneX(items[j].lane) + 8, items[j].y, LW - 16, RH - 2);
    L.streams.forEach(function (s, k) { ctx.fillStyle = g.fills[s]; ctx.fill(paths[k]); });
    ctx.fillStyle = "#cf222e";
    for (j = 0; j < items.length; j++) {
      var it = items[j], u = c.snap.nodes[it.i];
      if ((it.run < 0 && marks.has(it.i)) || focus.has(u)) ctx.fillRect(laneX(it.lane), it.y - RH, LW, 3 * RH);
      if (u === state.selected) { ctx.fillStyle = "#000"; ctx.fillRect(laneX(it.lane), it.y - RH, LW, 3 * RH); ctx.fillStyle = "#cf222e"; }
    }
  }
  var lanePane = addPane({
    name: "lanes", id: "lanes-canvas",
    key: function (c) { return "lanes:" + c.stage.group; },
    bounds: function (c) { var G = laneGeom(c); return G ? G.bounds : null; },
    at: function (c, u) {
      var G = laneGeom(c), i = c.pos[u];
      return G && i >= 0 && !isNaN(G.cx[i]) ? [G.cx[i], G.cy[i]] : null;
    },
    hit: function (p, c, wx, wy) { var it = laneHitItem(c, wx, wy); return it ? c.snap.nodes[it.i] : -1; },
    click: laneClick, draw: drawLanes
  });
