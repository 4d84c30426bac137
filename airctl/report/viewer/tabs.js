/* The other tabs: findings (with links to their nodes), profile (streams, critical path, top
 * ops, races, the timeline picture) and run (the run record).
 */
  /* a finding's node: opens its stage with the node selected, the finding's nodes marked in the
   * graph and in the lanes, both shown */
  function nodeLink(finding, name) {
    var a = el("a", "node-link", name);
    a.addEventListener("click", function () { state.finding = finding; goTo(finding.graph, finding.stage, name, true); });
    return a;
  }
  function openFinding(k) {
    var f = (data.findings || [])[k];
    if (!f) return;
    state.finding = f;
    var nodes = f.nodes || [];
    goTo(f.graph, f.stage, nodes[f.rule === "race_cross_stream_without_wait" && nodes.length > 1 ? 1 : 0], true);
  }
  function stageIndex(stages, name) {
    // verify-each names the stage after its pass ("after:yaml:p"); the ledger names YAML passes "yaml:p"
    var k = stages.findIndex(function (s) { return s.name === name; });
    if (k < 0 && typeof name === "string") k = stages.findIndex(function (s) { return "after:" + s.name === name; });
    return k;
  }
  function goTo(graphId, stageName, nodeName_, both) {
    var gk = graphs.findIndex(function (gr) { return gr.id === graphId; });
    if (gk < 0) gk = state.graph;
    showTab("graph");
    if (gk !== state.graph) selectGraph(gk);
    var sk = graphs[gk] ? stageIndex(graphs[gk].stages, stageName) : -1;
    if (sk >= 0) selectStage(sk);
    var c = cur();
    if (both && c && c.snap && c.snap.lanes && paneMode !== "both") setPane("both");
    if (nodeName_) selectByName(nodeName_);
  }
  function selectByName(name) {
    var c = cur();
    if (!c || !c.g) return false;
    for (var i = 0; i < c.snap.nodes.length; i++) {
      if (nodeName(c.g, c.snap, i) === name) { focusNode(c.snap.nodes[i]); return true; }
    }
    return false;
  }
  function buildFindings() {
    var box = $("findings"), list = data.findings || [];
    clear(box);
    $("tab-btn-findings").textContent = "Findings (" + list.length + ")";
    if (!list.length) { box.appendChild(el("p", "muted", "The verifier found nothing in this run.")); return; }
    var t = el("table", "grid"), head = el("tr");
    ["severity", "rule", "graph", "stage", "nodes", "message", "source"].forEach(function (h) { head.appendChild(el("th", null, h)); });
    t.appendChild(head);
    list.forEach(function (f) {
      var tr = el("tr", "finding");
      tr.appendChild(el("td", "sev-" + f.severity, f.severity));
      tr.appendChild(el("td", null, (f.rule || "") + (f.ref ? " (" + f.ref + ")" : "")));
      tr.appendChild(el("td", null, f.graph));
      tr.appendChild(el("td", null, f.stage));
      var td = el("td");
      (f.nodes || []).slice(0, 20).forEach(function (n) { td.appendChild(nodeLink(f, n)); });
      tr.appendChild(td);
      var msg = el("td", null, f.message);
      if (f.hint) { msg.appendChild(el("div", "muted", "hint: " + f.hint)); }
      tr.appendChild(msg);
      tr.appendChild(el("td", null, f.source));
      t.appendChild(tr);
    });
    box.appendChild(t);
  }
  function dur(x) {
    if (typeof x !== "number" || !isFinite(x)) return fmt(x);
    var a = Math.abs(x);
    if (a >= 1) return x.toFixed(3) + " s";
    if (a >= 1e-3) return (x * 1e3).toFixed(a >= 0.1 ? 1 : 2) + " ms";
    if (a > 0) return (x * 1e6).toFixed(1) + " \u00b5s";
    return "0";
  }
  function table(headers, rows) {
    var t = el("table", "grid"), head = el("tr");
    headers.forEach(function (h) { head.appendChild(el("th", null, h)); });
    t.appendChild(head);
    rows.forEach(function (cells) {
      var tr = el("tr");
      cells.forEach(function (c) { tr.appendChild(el("td", null, c === null || c === undefined ? "" : String(c))); });
      t.appendChild(tr);
    });
    return t;
  }
  /* predicted live bytes per stream over the replayed step: one polyline per stream (docs/memory.md) */
  function memoryChart(mem) {
    var NS = "http://www.w3.org/2000/svg", W = 640, H = 160, streams = Object.keys(mem.live_bytes);
    var wrap = el("div", "memory-chart");
    wrap.appendChild(el("h2", null, "Predicted device memory: peak " + bytes(mem.peak_bytes) +
      (mem.peak_at ? " at " + String(mem.peak_at.node) : "") + " (" + String(mem.rule) + ")"));
    var tmax = 0, bmax = 0;
    streams.forEach(function (s) {
      (mem.live_bytes[s] || []).forEach(function (p) { tmax = Math.max(tmax, +p[0] || 0); bmax = Math.max(bmax, +p[1] || 0); });
    });
    var svg = document.createElementNS(NS, "svg");
    svg.setAttribute("width", W); svg.setAttribute("height", H); svg.setAttribute("class", "memory-lines");
    var colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"];
    streams.forEach(function (s, k) {
      var pts = [], prev = null;
      (mem.live_bytes[s] || []).forEach(function (p) {  // a step function: the level holds until the next point
        var x = tmax ? (+p[0] / tmax) * (W - 70) + 60 : 60, y = bmax ? H - 20 - (+p[1] / bmax) * (H - 30) : H - 20;
        if (prev !== null) pts.push(x.toFixed(1) + "," + prev);
        pts.push(x.toFixed(1) + "," + y.toFixed(1));
        prev = y.toFixed(1);
      });
      var line = document.createElementNS(NS, "polyline");
      line.setAttribute("points", pts.join(" ")); line.setAttribute("fill", "none");
      line.setAttribute("stroke", colors[k % colors.length]); line.setAttribute("data-stream", s);
      var title = document.createElementNS(NS, "title");
      title.textContent = s;
      line.appendChild(title);
      svg.appendChild(line);
    });
    [[2, 14, bytes(bmax)], [2, H - 20, "0"], [60, H - 4, "0 \u00b5s"], [W - 80, H - 4, dur(tmax / 1e6)]].forEach(function (a) {
      var t = document.createElementNS(NS, "text");
      t.setAttribute("x", a[0]); t.setAttribute("y", a[1]); t.setAttribute("font-size", "11");
      t.textContent = a[2];
      svg.appendChild(t);
    });
    wrap.appendChild(svg);
    wrap.appendChild(el("p", null, streams.map(function (s, k) {
      return s + " (" + ["blue", "red", "green", "purple", "orange", "brown"][k % 6] + "): peak " +
        bytes((mem.by_stream || {})[s]);
    }).join(" \u00b7 ")));
    return wrap;
  }
  function bytes(n) {
    if (typeof n !== "number") return "-";
    var units = [["GiB", 1073741824], ["MiB", 1048576], ["KiB", 1024]];
    for (var i = 0; i < units.length; i++) if (Math.abs(n) >= units[i][1]) return (n / units[i][1]).toFixed(1) + " " + units[i][0];
    return n + " B";
  }
  function buildProfile() {
    var p = data.profile, box = $("profile");
    if (!p) { $("tab-btn-profile").style.display = "none"; return; }
    var tl = $("timeline");
    clear(box);
    if (p.error) { box.appendChild(el("p", "sev-error", p.error)); }
    var pr = p.predicted && typeof p.predicted === "object" ? p.predicted : null;
    if (pr) {
      box.appendChild(el("h2", "sev-warning", "Predicted NPU step (" + (pr.estimate ? "an estimate" : "replayed") +
        "; not measured): " + dur((pr.step_us || 0) / 1e6)));
      box.appendChild(el("p", null, "ops " + dur((pr.span_us || 0) / 1e6) + " + launch " + dur((pr.launch_us || 0) / 1e6) +
        " (assumed) \u00b7 times from " + String(pr.times_from) + (pr.device ? " \u00b7 device " + String(pr.device) : "") +
        (pr.unmatched ? " \u00b7 " + pr.unmatched + " kernel(s) without a time" : "")));
      if (pr.racy) {
        box.appendChild(el("p", "sev-error", "racy: not a valid plan (" + (pr.races || []).length +
          " race(s)); the race-free plan would take " + dur((pr.valid_step_us || 0) / 1e6) +
          " (airctl passes fix writes its waits)"));
      }
      if (pr.memory && pr.memory.live_bytes) box.appendChild(memoryChart(pr.memory));
      if (pr.bandwidth_bound_us || pr.core_bound_us) {
        box.appendChild(el("p", null, "bandwidth-bound " + dur((pr.bandwidth_bound_us || 0) / 1e6) +
          " \u00b7 cores oversubscribed " + dur((pr.core_bound_us || 0) / 1e6)));
      }
    }
    if (Array.isArray(p.streams)) {
      box.appendChild(el("h2", null, "Streams (median step)"));
      box.appendChild(table(["stream", "busy", "idle", "busy %", "ops", "longest gap"], p.streams.map(function (s) {
        return [s.stream, dur(s.busy_s), dur(s.idle_s),
                typeof s.busy_pct === "number" ? s.busy_pct.toFixed(1) : "", s.ops, dur(s.largest_gap_s)];
      })));
    }
    var facts = [];
    if (p.overlap_s !== undefined) facts.push("overlap between streams: " + dur(p.overlap_s));
    if (p.span_s !== undefined) facts.push("op span: " + dur(p.span_s));
    if (p.step_s !== undefined) facts.push("step time: " + dur(p.step_s));
    if (facts.length) box.appendChild(el("p", null, facts.join(" \u00b7 ")));
    if (Array.isArray(p.critical_path)) {
      box.appendChild(el("h2", null, "Critical path" + (p.critical_path_s !== undefined ? " (" + dur(p.critical_path_s) + " of work)" : "")));
      var cp = table(["node", "op", "stream", "time", "reached by", "source"], p.critical_path.map(function (c) {
        return [c.node, c.op, c.stream, dur(c.dur_s), c.via, c.source];
      }));
      p.critical_path.forEach(function (c, k) { provLinkCells(cp.rows[k + 1], c && c.node, c && c.source); });
      box.appendChild(cp);
    } else if (p.critical_path !== undefined) {
      box.appendChild(el("pre", "pre", JSON.stringify(p.critical_path, null, 1)));
    }
    if (Array.isArray(p.top_ops) && p.top_ops.length) {
      box.appendChild(el("h2", null, "Top ops (per step)"));
      box.appendChild(table(["op", "calls", "total", "mean"], p.top_ops.slice(0, 15).map(function (o) {
        return [o.op, o.count, dur(o.total_s), dur(o.mean_s)];
      })));
    }
    if (p.races !== undefined) {
      var races = Array.isArray(p.races) ? p.races : [p.races];
      box.appendChild(el("h2", races.length ? "sev-error" : null, "Races (" + races.length + ")"));
      if (races.length) {
        box.appendChild(table(["reader", "stream", "source", "reads", "stream", "source"], races.map(function (r) {
          return typeof r === "object" && r ? [r.reader, r.reader_stream, r.reader_source, r.producer, r.producer_stream, r.producer_source]
                                            : [String(r), "", "", "", "", ""];
        })));
      }
    }
    if (p.trace) box.appendChild(el("p", null, "Trace (open in https://ui.perfetto.dev): " + fmt(p.trace)));
    if (tl) box.appendChild(tl);
  }
  function buildWhy(box) {
    // airctl why: graph breaks, recompiles, recaptures, cache decisions (docs/why.md); text only (textContent)
    var why = data.why;
    if (!why) return;
    var rows = why.rows || [];
    box.appendChild(el("h2", rows.length ? "sev-warning" : null, "Why: " + why.summary));
    if (!rows.length) return;
    box.appendChild(table(["#", "class", "event", "reason", "where", "graph", "hint"], rows.map(function (r) {
      return [r.n, r["class"], r.what, r.reason, r.where, r.graph, r.hint];
    })));
  }
  function buildRun() {
    var box = $("run"), run = data.run || {};
    clear(box);
    buildWhy(box);
    var t = el("table", "grid");
    Object.keys(run).forEach(function (k) {
      var tr = el("tr");
      tr.appendChild(el("th", null, k));
      var v = run[k], td = el("td");
      if (v !== null && typeof v === "object") td.appendChild(el("pre", "pre", JSON.stringify(v, null, 1)));
      else td.textContent = fmt(v);
      tr.appendChild(td);
      t.appendChild(tr);
    });
    box.appendChild(t);
  }
