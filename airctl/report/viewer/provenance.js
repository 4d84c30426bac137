/* Provenance, both ways: the details of a node (a lane task, a GE op, an FX or Dynamo node) gain its
 * origin chain: the FX node at each stage that changed it and the pass that created, moved, renamed,
 * replaced or removed it (each a link to that stage with the node selected), its GE ops and profiled
 * tasks, the Dynamo node and the user's source line. The source line is a link to every node, GE op
 * and task that line made, in every graph. The chains are the payload's `provenance`
 * (airctl/report/provenance_data.py: the chains `airctl show --node` prints); the lookups by name
 * and by source line are built on first use, per graph, so a big report opens no slower.
 * A profiled task of the Profile tab's critical path links the same ways: its node to its chain
 * (opened in the Graph tab), its source line to the line's list.
 * URL hash: &source=<file:line> opens the source line's list.
 */
  var PROV = (data.provenance && data.provenance.graphs) || {};
  var PROV_MAX = 500;  // nodes listed for one source line
  function provOf(gid) {
    var p = PROV[gid];
    if (!p || p._byName) return p || null;
    p._byName = new Map(); p._byGe = new Map(); p._byDynamo = new Map();
    function put(m, k, v) { var a = m.get(k); if (!a) m.set(k, [v]); else if (a[a.length - 1] !== v) a.push(v); }
    p.chains.forEach(function (ch, n) {
      for (var j = 1; j < ch[0].length; j += 2) if (ch[0][j] !== null) put(p._byName, ch[0][j], n);
      for (j = 1; j < ch[7].length; j += 4) put(p._byGe, ch[7][j], n);
      if (ch[6]) ch[6][0].forEach(function (d) { put(p._byDynamo, d, n); });
    });
    return p;
  }
  function pstr(p, k) { return k === undefined || k < 0 ? null : p.strings[k]; }
  /* the chain's name at FX stage k (null: not there) */
  function nameAt(ch, k) {
    var names = ch[0], out = null;
    for (var j = 0; j < names.length && names[j] <= k; j += 2) out = names[j + 1];
    return out;
  }
  function lastAt(ch, stages) {
    var names = ch[0];
    for (var k = stages.length - 1; k >= 0; k--) if (nameAt(ch, k) !== null) return k;
    return names.length ? names[0] : 0;
  }
  /* the chain of node `name` as shown in stage `stage` of graph `gid`, or -1 */
  function chainOf(gid, stage, name) {
    var p = provOf(gid);
    if (!p || !stage) return -1;
    if (stage.name === "dynamo") return (p._byDynamo.get(name) || [-1])[0];
    if (stage.dialect === "ge") return (p._byGe.get(name) || [-1])[0];
    var k = p.stages.indexOf(stage.name), hits = p._byName.get(name) || [];
    for (var j = 0; j < hits.length; j++) {
      var ch = p.chains[hits[j]];
      if (k < 0 || nameAt(ch, k) === name || (k > 0 && nameAt(ch, k - 1) === name)) return hits[j];
    }
    return -1;
  }
  function passText(p, k) {
    var r = p.passes[k];
    if (!r) return "?";
    var stage = pstr(p, r[0]), name = pstr(p, r[1]), by = pstr(p, r[2]), where = pstr(p, r[3]);
    if (by === "AOT autograd") return by;
    if (by === "airctl") return by + (name === stage ? "" : " " + name);
    return by + " " + name + (where ? " (" + where + ")" : "");
  }
  function provLink(text, cls, onClick) {
    var a = el("a", "node-link " + cls, text);
    a.addEventListener("click", onClick);
    return a;
  }
  function goLink(gid, stage, name, text) {
    var a = provLink(text || name, "prov-go", function () { goTo(gid, stage, name, false); });
    a.dataset.stage = stage; a.dataset.node = name;
    return a;
  }
  function spanOf() {
    var s = el("span");
    for (var i = 0; i < arguments.length; i++) {
      var x = arguments[i];
      if (x === null || x === undefined) continue;
      s.appendChild(x instanceof Node ? x : document.createTextNode(String(x)));
    }
    return s;
  }
  function taskText(t) {
    return t[0] + " on " + t[1] + ": " + t[2] + " run(s), " + (t[3] / 1000).toFixed(3) + " ms";
  }
  /* the origin chain of the node shown in the details panel, appended to `box` */
  function provDetails(box, c, name) {
    var gid = c.graph.id, n = chainOf(gid, c.stage, name);
    if (n < 0) return;
    var p = PROV[gid], ch = p.chains[n], t = el("table", "prov");
    box.appendChild(el("h2", null, "provenance"));
    var last = lastAt(ch, p.stages), lastName = nameAt(ch, last);
    if (lastName !== null) row(t, "FX node", spanOf(goLink(gid, p.stages[last], lastName), " at " + p.stages[last]));
    else row(t, "FX node", spanOf(goLink(gid, p.stages[ch[0][0]], ch[0][1]), " gone after " + p.stages[last]));
    ch[1].forEach(function (e) {
      var k = e[0], stage = p.stages[k], at = nameAt(ch, k) === null ? nameAt(ch, k - 1) : nameAt(ch, k);
      var what = spanOf(e[1] + " by " + passText(p, e[2]), e[3] ? " (" + e[3] + ")" : null, " \u2192 ",
                        goLink(gid, k > 0 && nameAt(ch, k) === null ? p.stages[k - 1] : stage, at, stage));
      row(t, "pass", what, "prov-event");
    });
    row(t, "origin", spanOf(passText(p, ch[2]), pstr(p, ch[3]) ? " (" + pstr(p, ch[3]) + ")" : null));
    var ge = spanOf();
    for (var j = 0; j < ch[7].length; j += 4) {
      ge.appendChild(goLink(gid, pstr(p, ch[7][j]), ch[7][j + 1], ch[7][j + 1] + " (" + pstr(p, ch[7][j + 2]) + ")"));
    }
    if (ch[7].length) row(t, "GE ops", ge);
    else if (pstr(p, ch[8])) row(t, "GE ops", pstr(p, ch[8]), "muted");
    if (ch[9].length) {
      var tasks = el("div");
      ch[9].forEach(function (x) { tasks.appendChild(el("div", "prov-task", taskText(x))); });
      row(t, "tasks", tasks);
    }
    if (ch[6]) {
      var dy = spanOf();
      ch[6][0].forEach(function (d) { dy.appendChild(goLink(gid, "dynamo", d)); });
      dy.appendChild(el("span", "muted", "by " + pstr(p, ch[6][2])));
      row(t, "Dynamo", dy);
    }
    var src = pstr(p, ch[4]);
    row(t, "source", src ? spanOf(provLink(src, "prov-source", function () { showSource(src); }),
                                  pstr(p, ch[5]) ? ", module " + pstr(p, ch[5]) : null) : "none recorded");
    box.appendChild(t);
  }
  /* every node, GE op and task the source line `src` made, in every graph, in the details panel */
  function showSource(src) {
    var box = $("details");
    clear(box);
    box.appendChild(el("h2", null, "source " + src));
    var listed = 0, ntasks = 0, ul = el("ul", "prov-made");
    Object.keys(PROV).forEach(function (gid) {
      var p = provOf(gid), k = p.strings.indexOf(src);
      if (k < 0) return;
      if (!p._bySource) {
        p._bySource = new Map();
        p.chains.forEach(function (ch, n) { var a = p._bySource.get(ch[4]); if (!a) p._bySource.set(ch[4], [n]); else a.push(n); });
      }
      (p._bySource.get(k) || []).forEach(function (n) {
        if (listed >= PROV_MAX) return;
        var ch = p.chains[n], last = lastAt(ch, p.stages), name = nameAt(ch, last);
        var li = el("li", "prov-node");
        li.appendChild(el("span", "muted", "graph " + gid + ": "));
        li.appendChild(name !== null ? goLink(gid, p.stages[last], name) : goLink(gid, p.stages[ch[0][0]], ch[0][1]));
        li.appendChild(document.createTextNode(name !== null ? " at " + p.stages[last] : " (gone after " + p.stages[last] + ")"));
        for (var j = 0; j < ch[7].length; j += 4) li.appendChild(goLink(gid, pstr(p, ch[7][j]), ch[7][j + 1]));
        ch[9].forEach(function (t) { li.appendChild(el("div", "prov-task", "task " + taskText(t))); ntasks++; });
        ul.appendChild(li);
        listed++;
      });
    });
    box.appendChild(el("p", "muted", listed + " node" + (listed === 1 ? "" : "s") + (listed >= PROV_MAX ? " (first " +
      PROV_MAX + " listed)" : "") + ", " + ntasks + " profiled task" + (ntasks === 1 ? "" : "s")));
    box.appendChild(ul);
    state.source = src;
    writeHash();
  }
  /* a table row of a task (the Profile tab): its node cell a link to the node (a GE op or an FX node
   * of any graph, at its last FX stage, or its GE stage), its last cell a link to its source line */
  function provLinkCells(tr, node, src) {
    if (!tr) return;
    var name = node === null || node === undefined ? "" : String(node).split("#")[0];
    var gids = Object.keys(PROV);
    for (var g = 0; g < gids.length && name; g++) {
      var p = provOf(gids[g]), n = (p._byName.get(name) || p._byGe.get(name) || [-1])[0];
      if (n < 0) continue;
      var ch = p.chains[n], last = lastAt(ch, p.stages), at = nameAt(ch, last);
      var cell = tr.firstChild;
      clear(cell);
      if (at === name || !p._byGe.has(name)) cell.appendChild(goLink(gids[g], p.stages[last], at === null ? name : at, String(node)));
      else {
        for (var j = 1; j < ch[7].length; j += 4) if (ch[7][j] === name) break;
        cell.appendChild(goLink(gids[g], pstr(p, ch[7][j - 1]), name, String(node)));
      }
      break;
    }
    if (src) {
      var last_ = tr.lastChild;
      clear(last_);
      last_.appendChild(provLink(String(src), "prov-source", function () { showTab("graph"); showSource(String(src)); }));
    }
  }
