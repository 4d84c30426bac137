/* The panes: each view of the current stage (the graph, draw.js; the lanes, lanes.js) is a pane with
 * its own canvas, pan and zoom. This file holds what they share: which panes are shown (graph,
 * lanes or both side by side), sizing, fitting, focusing the selected node in every pane, frame
 * scheduling, and the mouse and wheel gestures (pan, zoom, click to select).
 *
 * A pane is {id (its canvas), key(c) (views are kept per key), bounds(c) -> [x0, y0, x1, y1],
 * at(c, u) -> [x, y] or null (where node u is), hit(p, c, wx, wy) -> u or -1, draw(p, c), click?}.
 */
  var panes = [], paneMode = "graph", pending = false;
  function addPane(spec) {
    var p = spec;
    p.canvas = $(spec.id);
    p.ctx = p.canvas ? p.canvas.getContext("2d") : null;
    p.dpr = 1; p.views = {};
    panes.push(p);
    if (p.ctx) attachGestures(p);
    return p;
  }
  function shown(p) { return paneMode === "both" || paneMode === p.name; }
  function setPane(mode) {
    if (["graph", "lanes", "both"].indexOf(mode) < 0) return;
    paneMode = mode;
    var centre = $("centre");
    centre.className = "pane-" + mode;
    var bs = document.querySelectorAll("#pane-switch button");
    for (var i = 0; i < bs.length; i++) bs[i].classList.toggle("active", bs[i].dataset.pane === mode);
    updateFold();
    resize();
    writeHash();
  }
  function paneView(p) {
    var c = cur();
    if (!c || !c.g) return { x: 0, y: 0, k: 1 };
    var key = p.key(c);
    if (!p.views[key]) p.views[key] = { x: 0, y: 0, k: 1, fresh: true };
    return p.views[key];
  }
  function paneSize(p) { return [p.canvas.width / p.dpr, p.canvas.height / p.dpr]; }
  function resize() {
    panes.forEach(function (p) {
      if (!p.ctx || !shown(p)) return;
      var r = p.canvas.getBoundingClientRect();
      p.dpr = window.devicePixelRatio || 1;
      p.canvas.width = Math.max(1, Math.round(r.width * p.dpr));
      p.canvas.height = Math.max(1, Math.round(r.height * p.dpr));
    });
    render();
  }
  /* the box around the nodes the current stage added or changed (its diff), padded; null when none */
  function changedBox(p, c) {
    var d = c.stage && c.stage.diff;
    if (!d) return null;
    var us = d.added.concat(d.changed.map(function (x) { return x[0]; })), b = null;
    us.forEach(function (u) {
      var at = c.pos[u] >= 0 ? p.at(c, u) : null;
      if (!at) return;
      var x0 = at[0] - W, y0 = at[1] - 2 * H, x1 = at[0] + W, y1 = at[1] + 2 * H;
      b = b ? [Math.min(b[0], x0), Math.min(b[1], y0), Math.max(b[2], x1), Math.max(b[3], y1)] : [x0, y0, x1, y1];
    });
    return b;
  }
  /* fit pane p: the first time on a stage that changed nodes, on those nodes (what the user came for);
   * else, or with whole (the fit button, `f`), the whole picture */
  function fitPane(p, whole) {
    var c = cur();
    if (!c || !c.g || !p.ctx) return;
    var b = p.bounds(c), sz = paneSize(p), v = paneView(p);
    if (!b || sz[0] < 2 || sz[1] < 2) return;  // not laid out yet: stays fresh, fitted at its first real frame
    var changed = whole !== true && v.fresh ? changedBox(p, c) : null;
    v.fresh = false;
    if (changed) {
      var kc = Math.min(sz[0] / (changed[2] - changed[0]), (sz[1] - 40) / (changed[3] - changed[1]), 1.5);
      v.k = kc;
      v.x = sz[0] / 2 - (changed[0] + changed[2]) / 2 * kc;
      v.y = sz[1] / 2 + 20 - (changed[1] + changed[3]) / 2 * kc;
      return;
    }
    var k = Math.min(sz[0] / (b[2] - b[0]), (sz[1] - 40) / (b[3] - b[1]), 1.5);
    var tall = k < 0.3 && whole !== true;  // a very tall picture: readable width, start at the top
    if (tall) k = Math.max(Math.min(sz[0] / (b[2] - b[0]), 1), 0.5);  // labels stay readable
    v.k = k;
    v.x = sz[0] / 2 - (b[0] + b[2]) / 2 * k;
    v.y = tall ? 40 - b[1] * k : sz[1] / 2 + 20 - (b[1] + b[3]) / 2 * k;
  }
  function fit(whole) { panes.forEach(function (p) { if (shown(p)) fitPane(p, whole); }); render(); }
  function centreOn(p, u) {
    var c = cur(), at = c && c.g ? p.at(c, u) : null;
    if (!at || !p.ctx) return;
    var v = paneView(p), sz = paneSize(p);
    if (v.fresh) fitPane(p);
    if (v.k < 0.6) v.k = 0.9;
    v.x = sz[0] / 2 - at[0] * v.k;
    v.y = sz[1] / 2 - at[1] * v.k;
  }
  function focusNode(u) {
    var c = cur();
    if (!c || !c.g) return;
    state.selected = u;
    panes.forEach(function (p) { if (shown(p)) centreOn(p, u); else p.focusLater = true; });
    showDetails();
    render();
    writeHash();
  }
  function render() {
    if (pending) return;
    pending = true;
    (window.requestAnimationFrame || function (f) { return setTimeout(f, 0); })(function () { pending = false; draw(); });
  }
  function draw() {
    var start = (window.performance || Date).now();
    if (!$("tab-graph").classList.contains("active")) return;
    var c = cur();
    panes.forEach(function (p) {
      if (!p.ctx || !shown(p)) return;
      var sz = paneSize(p), ctx = p.ctx;
      ctx.setTransform(p.dpr, 0, 0, p.dpr, 0, 0);
      ctx.clearRect(0, 0, sz[0], sz[1]);
      if (!c || !c.g) return;
      var v = paneView(p);
      if (v.fresh) fitPane(p);
      if (p.focusLater && state.selected >= 0) centreOn(p, state.selected);
      p.focusLater = false;
      ctx.setTransform(p.dpr * v.k, 0, 0, p.dpr * v.k, p.dpr * v.x, p.dpr * v.y);
      var x0 = -v.x / v.k, y0 = -v.y / v.k;
      p.draw(p, c, v, [x0, y0, x0 + sz[0] / v.k, y0 + sz[1] / v.k]);
    });
    if (state.probe) writeProbe(c);
    document.body.dataset.drawMs = String(Math.round((window.performance || Date).now() - start));
  }
  function attachGestures(p) {
    var drag = null, canvas = p.canvas;
    canvas.addEventListener("mousedown", function (e) {
      var v = paneView(p);
      drag = { x: e.clientX, y: e.clientY, vx: v.x, vy: v.y, moved: false };
      canvas.classList.add("dragging");
    });
    window.addEventListener("mousemove", function (e) {
      if (!drag) return;
      var dx = e.clientX - drag.x, dy = e.clientY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
      var v = paneView(p);
      v.x = drag.vx + dx; v.y = drag.vy + dy;
      render();
    });
    window.addEventListener("mouseup", function (e) {
      if (!drag) return;
      canvas.classList.remove("dragging");
      if (!drag.moved) {
        var r = canvas.getBoundingClientRect(), v = paneView(p), c = cur();
        if (c && c.g) {
          var wx = (e.clientX - r.left - v.x) / v.k, wy = (e.clientY - r.top - v.y) / v.k;
          if (!(p.click && p.click(p, c, wx, wy))) {
            state.selected = p.hit(p, c, wx, wy);
            panes.forEach(function (q) { if (q !== p && shown(q) && state.selected >= 0) centreOn(q, state.selected); });
            showDetails(); writeHash();
          }
        }
        render();
      }
      drag = null;
    });
    canvas.addEventListener("wheel", function (e) {
      e.preventDefault();
      var r = canvas.getBoundingClientRect(), v = paneView(p);
      var sx = e.clientX - r.left, sy = e.clientY - r.top;
      if (e.ctrlKey || !e.shiftKey) {
        var f = Math.exp(-e.deltaY * 0.0015), k = Math.min(Math.max(v.k * f, 0.002), 4);
        v.x = sx - (sx - v.x) * k / v.k; v.y = sy - (sy - v.y) * k / v.k; v.k = k;
      } else { v.x -= e.deltaX; v.y -= e.deltaY; }
      render();
    }, { passive: false });
  }
  window.addEventListener("resize", function () { resize(); });
