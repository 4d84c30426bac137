/* The URL hash, read at start and kept up to date, and start(): wires the controls, builds every
 * panel and selects what the hash names. Inlined last (it calls start()).
 * URL hash: #graph=<index|id>&stage=<index|name>&search=<text>&node=<name>&tab=<graph|findings|profile|assignment|run>
 *           &pane=<graph|lanes|both>&all=1&view=all&finding=<k> (as if its first node were clicked in the
 *           Findings tab)&probe=1 (see probe.js)&source=<file:line> (see provenance.js)
 */
  /* ---- URL hash ---- */
  function readHash() {
    var out = {};
    (location.hash || "").replace(/^#/, "").split("&").forEach(function (kv) {
      if (!kv) return;
      var p = kv.indexOf("="), k = p < 0 ? kv : kv.slice(0, p), v = p < 0 ? "" : kv.slice(p + 1);
      try { out[decodeURIComponent(k)] = decodeURIComponent(v.replace(/\+/g, " ")); } catch (e) { /* ignore */ }
    });
    return out;
  }
  var hashReady = false;
  function writeHash() {
    if (!hashReady || !history.replaceState) return;
    var gr = graphs[state.graph], parts = [];
    if (gr) parts.push("graph=" + encodeURIComponent(gr.id));
    if (gr && gr.stages[state.stage]) parts.push("stage=" + gr.stages[state.stage].index);
    if (state.search) parts.push("search=" + encodeURIComponent(state.search));
    if (paneMode !== "graph") parts.push("pane=" + paneMode);
    if (state.probe) parts.push("probe=1");
    var c = cur();
    if (c && c.g && state.selected >= 0) parts.push("node=" + encodeURIComponent(c.g.keys[state.selected]));
    if (state.source) parts.push("source=" + encodeURIComponent(state.source));
    try { history.replaceState(null, "", "#" + parts.join("&")); } catch (e) { /* file:// may refuse */ }
  }

  /* ---- start ---- */
  function start() {
    buildHeader();
    var h = readHash();
    state.probe = h.probe === "1";
    var switches = document.querySelectorAll("#pane-switch button");
    for (var b = 0; b < switches.length; b++) {
      switches[b].addEventListener("click", function (e) { setPane(e.currentTarget.dataset.pane); });
    }
    $("fold").addEventListener("click", foldAll);
    var tabs = document.querySelectorAll("nav.tabs button");
    for (var i = 0; i < tabs.length; i++) {
      tabs[i].addEventListener("click", function (e) { showTab(e.currentTarget.dataset.tab); });
    }
    $("show-all").addEventListener("change", function (e) { state.showAll = e.target.checked; buildStageList(); });
    var search = $("search");
    search.addEventListener("input", function () { state.search = search.value; runSearch(false); writeHash(); });
    search.addEventListener("keydown", function (e) {
      if (e.key === "Enter" && state.hits.length) {
        state.hitAt = (state.hitAt + 1) % state.hits.length;
        focusNode(state.hits[state.hitAt]);
      }
    });
    $("fit").addEventListener("click", function () { fit(true); });
    document.addEventListener("keydown", function (e) {
      var tag = (e.target && e.target.tagName) || "";
      if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") return;
      if (e.key === "ArrowDown" || e.key === "j") { stepStage(1); e.preventDefault(); }
      else if (e.key === "ArrowUp" || e.key === "k") { stepStage(-1); e.preventDefault(); }
      else if (e.key === "/") { search.focus(); e.preventDefault(); }
      else if (e.key === "f") { fit(true); }
      else if (e.key === "g") { setPane("graph"); }
      else if (e.key === "l") { setPane("lanes"); }
      else if (e.key === "b") { setPane("both"); }
    });
    buildFindings(); buildProfile(); buildAssignment(); buildRun();
    if (h.graph !== undefined) {
      var gk = graphs.findIndex(function (gr) { return gr.id === h.graph; });
      state.graph = gk >= 0 ? gk : Math.min(Math.max(parseInt(h.graph, 10) || 0, 0), Math.max(graphs.length - 1, 0));
    }
    if (h.all === "1") { state.showAll = true; $("show-all").checked = true; }
    buildGraphSelect();
    setPane(h.pane || data.pane || "graph");
    showTab(h.tab || "graph");
    resize();
    selectGraph(state.graph);
    if (h.stage !== undefined && graphs[state.graph]) {
      var st = graphs[state.graph].stages;
      var sk = stageIndex(st, h.stage);
      if (sk < 0) sk = st.findIndex(function (s) { return String(s.index) === h.stage; });
      if (sk >= 0) selectStage(sk);
    }
    buildLegend();
    if (h.search) { search.value = h.search; state.search = h.search; runSearch(true); }
    if (h.node) selectByName(h.node);
    if (h.view === "all") fit(true);
    if (h.finding !== undefined) openFinding(parseInt(h.finding, 10));
    if (h.source) showSource(h.source);
    hashReady = true;
    document.body.dataset.parseMs = String(Math.round(parseMs));
    document.body.dataset.readyMs = String(Math.round((window.performance || Date).now() - t0));
    document.body.dataset.ready = "1";
  }
  start();
