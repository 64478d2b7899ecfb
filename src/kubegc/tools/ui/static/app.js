/* The page: follows the server's event stream, redraws the graph with cytoscape.js
 * (dagre layout), and drives the panel, the search box, the what-if and the keys. */
(() => {
"use strict";

const {buildView, PAGE} = window.kubegcModel;
const panel = window.kubegcPanel;
const $ = (id) => document.getElementById(id);

const state = {
  namespace: new URLSearchParams(location.search).get("namespace") || "",
  nodes: new Map(), marks: {references: {}, findings: {}, chains: {}},
  expanded: new Map(), pinned: new Set(), selected: null, whatif: null,
  view: null, source: "", connected: false,
};
// for tests and benches: when the page last drew what it received
window.kubegcUI = {firstRender: null, renders: 0, lastRender: null, snapshotAt: null,
  scriptAt: performance.now(), state};

cytoscape.use(cytoscapeDagre);
const cy = window.kubegcUI.cy = cytoscape({
  container: $("graph"), boxSelectionEnabled: false,
  minZoom: 0.05, maxZoom: 3, textureOnViewport: true, hideEdgesOnViewport: true,
  style: [
    {selector: "node", style: {"shape": "round-rectangle", "label": "data(label)", "text-wrap": "wrap",
      "text-valign": "center", "font-size": 10, "width": 150, "height": 46, "background-color": "#e8eefc",
      "border-width": 1, "border-color": "#5a6b8c", "color": "#1d2330", "text-max-width": 144}},
    {selector: "node.deleting", style: {"height": 58, "background-color": "#ffd8a8", "border-style": "dashed", "border-width": 2, "border-color": "#c46a00"}},
    {selector: "node.external", style: {"opacity": 0.7, "border-style": "dotted"}},
    {selector: "node.group", style: {"background-color": "#eef0f3", "shape": "round-rectangle", "height": 56, "border-width": 2, "border-color": "#8a93a6"}},
    {selector: "node.group.deleting", style: {"background-color": "#ffe6c7"}},
    {selector: "node.missing", style: {"background-color": "#fff", "border-style": "dashed", "border-color": "#999"}},
    {selector: "node.missing.dangling", style: {"border-color": "#d11"}},
    {selector: "node.missing.invalid", style: {"border-color": "#8a2be2"}},
    {selector: "node.chain", style: {"border-color": "#d11", "border-width": 3}},
    {selector: "node.leaf", style: {"border-color": "#d11", "border-width": 5, "border-style": "double"}},
    {selector: "node.wi-deleted", style: {"background-color": "#f4a3a3"}},
    {selector: "node.wi-orphaned", style: {"background-color": "#a9c8ff"}},
    {selector: "node.wi-survives", style: {"background-color": "#a7e3b0"}},
    {selector: "node.wi-hangs", style: {"background-color": "#ffb347", "border-width": 4}},
    {selector: "node.selected", style: {"overlay-color": "#2f6fff", "overlay-opacity": 0.18, "overlay-padding": 6}},
    {selector: "edge", style: {"curve-style": "bezier", "target-arrow-shape": "triangle", "width": 1.2,
      "line-color": "#9aa3b5", "target-arrow-color": "#9aa3b5", "arrow-scale": 0.8}},
    {selector: "edge.block", style: {"line-color": "#5a6b8c", "target-arrow-color": "#5a6b8c"}},
    {selector: "edge.controller", style: {"width": 2.2}},
    {selector: "edge.dangling", style: {"line-style": "dashed", "line-color": "#d11", "target-arrow-color": "#d11"}},
    {selector: "edge.invalid", style: {"line-style": "dotted", "line-color": "#8a2be2", "target-arrow-color": "#8a2be2"}},
    {selector: "edge.unresolved", style: {"line-style": "dashed"}},
    {selector: "edge.chain", style: {"line-color": "#d11", "target-arrow-color": "#d11", "width": 4}},
  ],
});

// -- drawing -------------------------------------------------------------------------

let redrawTimer = null, layoutPending = false, layoutRunning = false;

function scheduleRedraw(delay = 20) {
  if (redrawTimer === null) redrawTimer = setTimeout(redraw, delay);
}

function redraw() {
  redrawTimer = null;
  const view = buildView(state);
  state.view = view;
  const wanted = new Map(view.elements.map((e) => [e.data.id, e]));
  let structural = false;
  cy.batch(() => {
    cy.elements().forEach((ele) => {
      if (!wanted.has(ele.id())) { ele.remove(); structural = true; }
    });
    const add = [];
    for (const [id, e] of wanted) {
      const ele = cy.getElementById(id);
      if (ele.empty()) { add.push(e); continue; }
      if (ele.data("label") !== e.data.label) ele.data("label", e.data.label);
      if (ele.data("count") !== e.data.count) ele.data("count", e.data.count);
      ele.classes(e.classes);
    }
    if (add.length) {
      // nodes first: an edge needs both ends
      cy.add(add.filter((e) => e.group === "nodes"));
      cy.add(add.filter((e) => e.group === "edges"));
      structural = true;
    }
  });
  updateSummary(view);
  if (structural) runLayout(); else rendered();
}

// siblings in a stable order whatever order their events came in: by kind, then name (a
// group after its kind's objects), so a redraw never shuffles them
const byOrder = (a, b) => (a.data("order") || "").localeCompare(b.data("order") || "");

function runLayout() {
  if (layoutRunning) { layoutPending = true; return; }
  layoutRunning = true;
  const layout = cy.layout({name: "dagre", rankDir: "TB", nodeSep: 18, rankSep: 60, edgeSep: 8,
    animate: false, fit: false, sort: byOrder});
  layout.one("layoutstop", () => {
    layoutRunning = false;
    if (!window.kubegcUI.firstRender || cy.nodes().length < 60) {
      cy.fit(undefined, 30);
      if (cy.zoom() > 1.1) { cy.zoom(1.1); cy.center(); }
    }
    rendered();
    if (layoutPending) { layoutPending = false; runLayout(); }
  });
  layout.run();
}

function rendered() {
  const ui = window.kubegcUI;
  ui.renders++;
  ui.lastRender = performance.now();
  if (ui.firstRender === null && state.connected) ui.firstRender = ui.lastRender;
  document.body.dataset.renders = String(ui.renders);
}

function updateSummary(view) {
  const where = state.namespace ? `in namespace ${state.namespace}` : "in the whole cluster";
  const live = state.connected ? "live" : "reconnecting…";
  $("summary").textContent = `${view.counted} objects, ${view.deleting} deleting ${where} (${live})`;
}

// -- the event stream ----------------------------------------------------------------

let source = null;

function connect() {
  if (source) source.close();
  state.connected = false;
  source = new EventSource(`api/stream?namespace=${encodeURIComponent(state.namespace)}`);
  source.addEventListener("snapshot", (ev) => {
    const snap = JSON.parse(ev.data);
    window.kubegcUI.snapshotAt = performance.now();
    state.connected = true;
    state.nodes = new Map(snap.nodes.map((n) => [n.id, n]));
    state.marks = snap.marks;
    state.source = snap.source;
    $("source").textContent = snap.source + (snap.unlisted.length ? ` — not listed: ${snap.unlisted.join(", ")}` : "");
    fillNamespaces(snap.namespaces);
    showMalformed(snap.marks);
    scheduleRedraw(0);
    refreshSelection();
  });
  source.addEventListener("changes", (ev) => applyChanges(JSON.parse(ev.data)));
  source.addEventListener("doctor", (ev) => {
    state.marks = JSON.parse(ev.data);
    showMalformed(state.marks);
    scheduleRedraw();
    refreshSelection(false);
  });
  source.addEventListener("namespaces", (ev) => fillNamespaces(JSON.parse(ev.data)));
  source.onerror = () => {
    state.connected = false;
    if (state.view) updateSummary(state.view);
    if (source.readyState === EventSource.CLOSED) {
      $("summary").textContent = "disconnected: the session may have ended — open a new login URL";
    }
  };
}

// The doctor's MalformedObject findings: objects breaking the API's schema, read without
// the broken fields (or left out); the page draws the rest and says so here.
function showMalformed(marks) {
  const lines = (marks && marks.malformed) || [];
  const box = $("malformed");
  box.hidden = lines.length === 0;
  box.textContent = lines.length ? `malformed input: ${lines.length} field${lines.length === 1 ? "" : "s"} (hover; kubegc doctor lists them)` : "";
  box.title = lines.join("\n");
}

function applyChanges(change) {
  for (const n of change.upserts) {
    const before = state.nodes.get(n.id);
    if (!before) activity(`${n.kind}/${n.name} created`);
    else if (n.deleting && !before.deleting) activity(`${n.kind}/${n.name} Terminating (finalizers: ${n.finalizers.join(", ") || "none"})`);
    else if (before.deleting && before.finalizers.join() !== n.finalizers.join()) activity(`${n.kind}/${n.name} finalizers left: ${n.finalizers.join(", ") || "none"}`);
    state.nodes.set(n.id, n);
  }
  for (const id of change.deletes) {
    const before = state.nodes.get(id);
    if (before) activity(`${before.kind}/${before.name} deleted`);
    state.nodes.delete(id);
  }
  scheduleRedraw();
  if (state.selected && (change.deletes.includes(state.selected) || change.upserts.some((n) => n.id === state.selected))) {
    refreshSelection();
  }
}

function activity(text) {
  const list = $("activity");
  const li = document.createElement("li");
  li.textContent = `${new Date().toLocaleTimeString()} ${text}`;
  list.prepend(li);
  while (list.children.length > 200) list.lastChild.remove();
}

function fillNamespaces(names) {
  const select = $("namespace");
  const wanted = ["", ...names];
  if (state.namespace && !names.includes(state.namespace)) wanted.push(state.namespace);
  if ([...select.options].map((o) => o.value).join("\n") === wanted.join("\n")) return;
  select.replaceChildren(...wanted.map((n) => {
    const o = document.createElement("option");
    o.value = n;
    o.textContent = n || "(whole cluster)";
    return o;
  }));
  select.value = state.namespace;
}

// -- selection, details, what-if -----------------------------------------------------

let detailsSeq = 0, detailsTimer = null;

function select(id, {center = true} = {}) {
  state.selected = id;
  state.whatif = null;
  $("whatif-result").textContent = "";
  state.pinned = new Set(id && state.nodes.has(id) ? [id] : []);
  $("whatif").disabled = !(id && state.nodes.has(id));
  scheduleRedraw(0);
  refreshSelection();
  if (center && id) setTimeout(() => {
    const ele = cy.getElementById(id);
    if (!ele.empty()) cy.animate({center: {eles: ele}, duration: 150});
  }, 200);
}

function refreshSelection(fetchAgain = true) {
  const id = state.selected;
  const box = $("details");
  if (!id) return;
  if (id.startsWith("group:")) {
    const count = (state.view && state.view.members.get(id) || []).length;
    box.replaceChildren(Object.assign(document.createElement("p"), {textContent: `a group of ${count} objects: Enter or click expands it`}));
    return;
  }
  const node = state.nodes.get(id);
  if (!node) {
    if (box.dataset.id === id && box.dataset.gone !== "1") {
      const last = JSON.parse(box.dataset.node || "{}");
      panel.renderGone(box, last);
      box.dataset.gone = "1";
      goneDetails(box, id, last);
    }
    $("whatif").disabled = true;
    return;
  }
  const chain = node.uid ? (state.marks.chains || {})[node.uid] : null;
  box.dataset.id = id;
  box.dataset.gone = "0";
  box.dataset.node = JSON.stringify(node);
  if (box.dataset.detailsFor !== id) {
    box.dataset.detailsFor = "";
    box._details = null;
  }
  panel.renderDetails(box, node, box._details, chain);
  if (!fetchAgain) return;
  clearTimeout(detailsTimer);
  detailsTimer = setTimeout(async () => {
    const seq = ++detailsSeq;
    try {
      const resp = await fetch(`api/details?id=${encodeURIComponent(id)}`);
      const body = await resp.json();
      if (seq !== detailsSeq || state.selected !== id) return;
      if (!resp.ok) return;
      box._details = body;
      box.dataset.detailsFor = id;
      const current = state.nodes.get(id);
      if (current) panel.renderDetails(box, current, body, current.uid ? (state.marks.chains || {})[current.uid] : null);
    } catch (e) { /* the stream will bring the next state */ }
  }, 150);
}

/* why it went, and its deletion's timeline (the page saw it go: the server remembers);
 * fetched again each second for a minute: the garbage collector's records of what it does
 * next (its dependents) come after */
const GONE_REFRESH_MS = 1000, GONE_REFRESH_FOR_MS = 60000;

async function goneDetails(box, id, last, until = performance.now() + GONE_REFRESH_FOR_MS) {
  const shown = () => state.selected === id && !state.nodes.has(id) && box.dataset.id === id;
  try {
    const resp = await fetch(`api/details?id=${encodeURIComponent(id)}`);
    if (!resp.ok || !shown()) return;
    panel.renderGone(box, last, await resp.json());
  } catch (e) { /* gone is all there is to say */ }
  if (shown() && performance.now() < until) {
    setTimeout(() => { if (shown()) goneDetails(box, id, last, until); }, GONE_REFRESH_MS);
  }
}

async function runWhatIf() {
  const id = state.selected;
  const node = id && state.nodes.get(id);
  if (!node) return;
  const policy = $("whatif-policy").value;
  const pre = $("whatif-result");
  pre.textContent = `simulating the delete of ${panel.refText(node)} (${policy})…`;
  $("whatif").disabled = true;
  try {
    const resp = await fetch(`api/whatif?id=${encodeURIComponent(id)}&policy=${encodeURIComponent(policy)}`);
    const body = await resp.json();
    if (state.selected !== id) return;
    if (!resp.ok) { pre.textContent = `the what-if failed: ${body.message}`; return; }
    state.whatif = body;
    panel.renderWhatIf(pre, node, body);
    scheduleRedraw(0);
  } finally {
    $("whatif").disabled = !state.nodes.has(state.selected || "");
  }
}

function expand(gid) {
  const view = state.view;
  const members = view ? view.members.get(gid) || [] : [];
  state.expanded.set(gid, Math.min(members.length, (state.expanded.get(gid) || 0) + PAGE));
  scheduleRedraw(0);
}

cy.on("tap", "node", (ev) => {
  const id = ev.target.id();
  if (id.startsWith("group:")) { expand(id); state.selected = id; return; }
  if (id.startsWith("missing:")) return;
  select(id, {center: false});
  $("graph").focus();
});

$("search").addEventListener("keydown", async (ev) => {
  if (ev.key === "Escape") { ev.target.blur(); $("graph").focus(); return; }
  if (ev.key !== "Enter") return;
  const q = ev.target.value.trim();
  if (!q) return;
  const resp = await fetch(`api/find?q=${encodeURIComponent(q)}&namespace=${encodeURIComponent(state.namespace)}`);
  const body = await resp.json();
  if (!resp.ok) {
    $("details").replaceChildren(Object.assign(document.createElement("p"), {textContent: body.message}));
    return;
  }
  // a cluster-scoped object found from a namespace's page is not in its stream: draw it
  if (body.node && !state.nodes.has(body.id)) state.nodes.set(body.id, body.node);
  select(body.id);
});

$("whatif").addEventListener("click", runWhatIf);

$("namespace").addEventListener("change", (ev) => {
  state.namespace = ev.target.value;
  const url = new URL(location.href);
  if (state.namespace) url.searchParams.set("namespace", state.namespace); else url.searchParams.delete("namespace");
  history.replaceState(null, "", url);
  state.expanded.clear();
  state.selected = null;
  window.kubegcUI.firstRender = null;
  connect();
});

// -- keyboard ------------------------------------------------------------------------

function siblings(id) {
  const view = state.view;
  const parent = view.parentOf.get(id);
  return cy.nodes().filter((n) => !n.id().startsWith("missing:") && view.parentOf.get(n.id()) === parent)
    .sort((a, b) => a.position("x") - b.position("x")).map((n) => n.id());
}

function move(key) {
  const view = state.view;
  if (!view) return;
  const cur = state.selected;
  if (!cur || cy.getElementById(cur).empty()) {
    const first = cy.nodes().filter((n) => !n.id().startsWith("missing:")).sort((a, b) => a.position("y") - b.position("y") || a.position("x") - b.position("x"))[0];
    if (first) choose(first.id());
    return;
  }
  if (key === "ArrowUp") {
    const parent = view.parentOf.get(cur);
    if (parent && !cy.getElementById(parent).empty()) choose(parent);
  } else if (key === "ArrowDown") {
    const kids = cy.getElementById(cur).outgoers("node").sort((a, b) => a.position("x") - b.position("x"));
    if (kids.length) choose(kids[0].id());
  } else {
    const sib = siblings(cur);
    const i = sib.indexOf(cur);
    const next = sib[i + (key === "ArrowRight" ? 1 : -1)];
    if (next) choose(next);
  }
}

function choose(id) {
  if (id.startsWith("group:")) {
    state.selected = id;
    scheduleRedraw(0);
    refreshSelection();
    const ele = cy.getElementById(id);
    if (!ele.empty()) cy.animate({center: {eles: ele}, duration: 120});
  } else {
    select(id);
  }
}

document.addEventListener("keydown", (ev) => {
  const typing = ev.target instanceof HTMLInputElement || ev.target instanceof HTMLSelectElement;
  if (typing) return;
  if (ev.key === "/") { ev.preventDefault(); $("search").focus(); return; }
  if (ev.key.startsWith("Arrow")) { ev.preventDefault(); move(ev.key); return; }
  if (ev.key === "Enter" && state.selected && state.selected.startsWith("group:")) { expand(state.selected); return; }
  if (ev.key === "Escape") { select(null); $("details").replaceChildren(); return; }
  if (ev.key === "w" && state.selected && !state.selected.startsWith("group:")) runWhatIf();
});

connect();
})();
