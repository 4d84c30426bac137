/* The Assignment tab: where each node of each graph's final FX stage went (`airctl show --assignment`;
 * the payload's `assignment`, airctl/report/provenance_data.py): totals by category per graph (a
 * total filters the list to its category), then the nodes with their category, GE op(s) or why,
 * static kernel, super kernel scope and stream. A node's name opens it in the Graph tab, where its
 * details show its origin chain. GE's compile statistics and how they compare close the tab.
 * At most ASSIGN_SHOWN rows are in the page at once.
 */
  var ASSIGN_SHOWN = 2000;
  function buildAssignment() {
    var a = data.assignment, box = $("assignment");
    if (!a || !box) { if ($("tab-btn-assignment")) $("tab-btn-assignment").style.display = "none"; return; }
    clear(box);
    if (a.error) { box.appendChild(el("p", "sev-error", a.error)); return; }
    if (!a.graphs.length) { box.appendChild(el("p", "muted", "The run has no FX graph to assign.")); return; }
    var total = Object.keys(a.totals).map(function (k) { return k + " " + a.totals[k]; }).join(" \u00b7 ");
    box.appendChild(el("p", null, "mode " + a.mode + " \u00b7 all graphs: " + total));
    a.graphs.forEach(function (g) { box.appendChild(assignmentGraph(a, g)); });
    if (a.static_kernel_option) {
      box.appendChild(el("p", null, "static kernels: " + (a.static_kernels ? "asked for" : "not asked for") +
        " (" + a.static_kernel_option + ")"));
    }
    var st = a.compile_stat || {};
    box.appendChild(el("p", st.status === "differ" ? "sev-warning" : "muted", "GE compile statistics (" + st.status + "): " +
      st.note + (st.file ? " \u2014 " + st.file : "")));
  }
  function assignmentGraph(a, g) {
    var wrap = el("div", "assignment-graph"), list = el("div");
    wrap.dataset.graph = g.graph;
    var head = "graph " + g.graph + " at " + g.stage;
    if (g.captured) head += g.fell_back ? ": fell back to eager" : ": captured graph key(s) " + (g.captured.join(", ") || "none recorded");
    wrap.appendChild(el("h2", null, head));
    var totals = el("p", "assignment-totals");
    Object.keys(g.totals).forEach(function (k) {
      var link = el("a", "node-link assign-cat", k + " " + g.totals[k]);
      link.dataset.category = k;
      link.addEventListener("click", function () { fillAssignment(list, a, g, k); });
      totals.appendChild(link);
    });
    var all = el("a", "node-link assign-cat", "all");
    all.addEventListener("click", function () { fillAssignment(list, a, g, null); });
    totals.appendChild(all);
    wrap.appendChild(totals);
    wrap.appendChild(list);
    fillAssignment(list, a, g, null);
    return wrap;
  }
  function fillAssignment(box, a, g, category) {
    clear(box);
    var rows = g.nodes.filter(function (r) { return category === null || a.categories[r[2]] === category; });
    var t = el("table", "grid assignment"), head = el("tr");
    ["node", "op", "category", "GE op(s) / why", "static kernel", "super kernel", "stream"].forEach(function (h) {
      head.appendChild(el("th", null, h));
    });
    t.appendChild(head);
    rows.slice(0, ASSIGN_SHOWN).forEach(function (r) {
      var tr = el("tr"), td = el("td");
      td.appendChild(goLink(g.graph, g.stage, r[0]));
      tr.appendChild(td);
      [r[1], a.categories[r[2]], r[3], r[4] === null ? "" : (r[4] ? "yes" : "no"), r[5] || "", r[6] || ""].forEach(function (c) {
        tr.appendChild(el("td", null, c));
      });
      tr.dataset.category = a.categories[r[2]];
      t.appendChild(tr);
    });
    var more = rows.length > ASSIGN_SHOWN ? " (first " + ASSIGN_SHOWN + " shown)" : "";
    var all = Object.keys(g.totals).reduce(function (n, k) { return n + g.totals[k]; }, 0);
    var cut = g.listed < all ? "; the page holds the first " + g.listed + " of " + all +
      " (airctl show --assignment --json lists all)" : "";
    box.appendChild(el("p", "muted", rows.length + " node" + (rows.length === 1 ? "" : "s") +
      (category ? " " + category : "") + more + cut));
    box.appendChild(t);
  }
