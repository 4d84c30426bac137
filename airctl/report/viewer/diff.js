/* The diff view: a stage whose payload carries a diff (against the previous snapshot of its group)
 * colours added, changed and removed nodes, shows removed nodes as ghosts at their old place, draws
 * added and removed edges, and explains a changed node in the details panel.
 */
  var REMOVED_EDGE = "#ff8182";

  /* node key -> added/changed/removed in this stage, and the removed keys drawn as ghosts */
  function diffMarks(g, st) {
    var status = new Map();
    var ghosts = [];
    if (st.diff) {
      st.diff.added.forEach(function (u) { status.set(u, "added"); });
      st.diff.changed.forEach(function (c) { status.set(c[0], "changed"); });
      var pos = snapPos(g, st.snap);
      st.diff.removed.forEach(function (u) { if (pos[u] < 0) ghosts.push(u); else status.set(u, "removed"); });
    }
    return { status: status, ghosts: ghosts };
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
  function diffLegend(box) {
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
  /* details rows of node u (at i in the stage, -1 for a ghost) that say what the diff did to it */
  function diffDetails(t, c, u, i, st, det) {
    var g = c.g;
    if (st) row(t, "diff", st + (st === "removed" && i < 0 ? " (shown from the previous stage)" : ""), "status-" + st);
    if (st !== "changed") return;
    var ch = c.stage.diff.changed.filter(function (x) { return x[0] === u; })[0];
    if (ch) row(t, "what changed", ch[1]);
    var prev2 = prevSnapshot(c), pi = prev2 ? prev2.nodes.indexOf(u) : -1;
    if (pi >= 0) {
      var was = g.ops[prev2.op[pi]], ws = g.streams[prev2.stream[pi]];
      row(t, "was", was + " on " + (ws === null ? "default stream" : ws));
      var old = nodeDetails(g, prev2, pi);
      if (JSON.stringify(old.attrs || {}) !== JSON.stringify(det.attrs || {})) {
        row(t, "attrs before", el("pre", null, JSON.stringify(old.attrs || {}, null, 1)));
      }
    }
  }
  function drawDiffEdges(ctx, c, g, x0, y0, x1, y1, px) {
    if (!c.stage.diff) return;
    drawEdges(ctx, g, flat(c.stage.diff.edges_added), x0, y0, x1, y1, STATUS.added, [], 3 * Math.max(px, 1));
    drawEdges(ctx, g, flat(c.stage.diff.edges_removed), x0, y0, x1, y1, REMOVED_EDGE, [2 * px, 4 * px], 3 * Math.max(px, 1));
  }
