/* The graph tab's side panel: header and tabs, the graph selector, the stage list and stepping
 * through it, the node count line and the legend.
 */
  /* ---- header, tabs ---- */
  function buildHeader() {
    var run = data.run || {};
    document.title = data.title || "airctl";
    $("title").textContent = data.title || "airctl";
    var parts = [];
    if (run.status) parts.push("status: " + run.status);
    if (run.mode) parts.push("mode: " + run.mode);
    if (run.backend && run.backend.name) parts.push("backend: " + run.backend.name);
    var races = (run.execution && run.execution.races) ? run.execution.races.length : 0;
    var errors = (run.findings || []).filter(function (f) { return f.severity === "error"; }).length;
    if (run.execution && run.execution.matches_eager !== undefined) {
      // a run with races matched eager only because sim ran them in order: never shown green
      parts.push("matches eager: " + run.execution.matches_eager + (races ? " (on sim; a device may differ)" : ""));
    }
    if (races) parts.push("stream races: " + races);
    if (errors) parts.push("verifier errors: " + errors);
    $("run-line").textContent = parts.join(" · ");
    if (run.status) $("run-line").className = "run status-" + ((races || errors) && run.status === "ok" ? "races" : run.status);
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
    updateFold();
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
      if (EDGE[kind][1].length) ln.style.borderTopStyle = kind === "order" ? "dotted" : "dashed";
      row.appendChild(ln); row.appendChild(el("span", null, kind + " edge"));
      box.appendChild(row);
    });
    if (c.stage.diff) diffLegend(box);
  }
