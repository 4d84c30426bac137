/* The canvas and its view: size, fit, focus on a node, which nodes are in view (through the
 * group's grid), hit testing, and the mouse and wheel gestures (pan, zoom, select).
 */
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
