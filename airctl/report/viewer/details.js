/* Search and the details panel: matches of the search box by name or op, and the attributes of
 * the selected node (from the previous stage for a removed one).
 */
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
    state.source = null;
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
    var det = nodeDetails(g, source, at);
    box.appendChild(el("h2", null, nodeName(g, source, at)));
    var t = el("table");
    row(t, "op", g.ops[source.op[at]]);
    var s = g.streams[source.stream[at]];
    row(t, "stream", s === null ? "default stream" : s);
    row(t, "kind", det.kind);
    if (det.module) row(t, "module", det.module);
    row(t, "source", det.source || "\u2014");
    diffDetails(t, c, u, i, st, det);
    if (det.inputs) row(t, "inputs", det.inputs.join(", "));
    if (det.control_inputs) row(t, "control inputs", det.control_inputs.join(", "));
    box.appendChild(t);
    provDetails(box, c, nodeName(g, source, at));
    if (det.attrs) { box.appendChild(el("h2", null, "attributes")); box.appendChild(el("pre", null, JSON.stringify(det.attrs, null, 1))); }
    if (det.meta) { box.appendChild(el("h2", null, "meta")); box.appendChild(el("pre", null, JSON.stringify(det.meta, null, 1))); }
  }
