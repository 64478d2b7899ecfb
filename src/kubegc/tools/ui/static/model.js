/* The owner graph as drawn: which objects are shown, which are folded into counted
 * groups, and the edges between what is shown. Pure functions of the page's state (no
 * DOM), so that a cascade of thousands of objects costs one pass per redraw.
 *
 * An object hangs under its primary owner (its controller reference, else its first
 * reference); objects without owners hang under their namespace and kind. When one owner
 * has more than GROUP_MIN dependents of one kind (roots: ROOT_GROUP_MIN of one kind in a
 * namespace), they fold into a group node "N Kinds" whose clicks reveal them PAGE at a
 * time. Folded objects take their own dependents with them. The selected object, and
 * the chain of owners above it, are never folded. Every ownerReference is an edge: an
 * object with several owners has several; an owner that is not there is drawn as a
 * missing node, its edge dangling or invalid as the doctor judges the reference. */
(() => {
"use strict";

const GROUP_MIN = 8;
const ROOT_GROUP_MIN = 20;
const PAGE = 25;

function primaryOwner(node) {
  const refs = node.owners || [];
  const ctrl = refs.find((r) => r.controller && r.uid);
  const first = ctrl || refs.find((r) => r.uid);
  return first ? first.uid : null;
}

function nodeLabel(n) {
  let state = n.deleting ? "Terminating" : (n.status && n.status !== "-" ? n.status : "");
  if (n.deleting && n.finalizers.length) state += `\nheld by ${n.finalizers.join(", ")}`;
  if (n.ready && n.ready.includes("/") && !n.deleting) state += (state ? " " : "") + n.ready;
  return `${n.kind}\n${n.name}` + (state ? `\n${state}` : "");
}

/* state: {nodes: Map(id -> node), marks, expanded: Map(groupId -> shown count),
 *         pinned: Set(id), selected, whatif: {result} | null}
 * returns {elements: [cytoscape element defs], counted, deleting, members: Map(groupId ->
 *          [ids]), parentOf: Map(id -> drawn parent id)} */
function buildView(state) {
  const nodes = state.nodes;
  const byUid = new Map();
  for (const n of nodes.values()) if (n.uid) byUid.set(n.uid, n.id);
  let counted = 0, deleting = 0;
  for (const n of nodes.values()) {
    if (n.external) continue;
    counted++;
    if (n.deleting) deleting++;
  }
  // the tree the folding follows: parent id (an object, a missing owner, or a root bucket)
  const children = new Map();
  const parentKey = new Map();
  for (const n of nodes.values()) {
    const owner = primaryOwner(n);
    const key = owner ? (byUid.get(owner) || "missing:" + owner) : `root:${n.namespace}:${n.kind}`;
    parentKey.set(n.id, key);
    if (!children.has(key)) children.set(key, []);
    children.get(key).push(n.id);
  }
  const keep = new Set();  // never folded: the pinned objects and their owner chains
  for (const id of state.pinned) {
    let cur = id, guard = 0;
    while (cur && nodes.has(cur) && !keep.has(cur) && guard++ < 64) {
      keep.add(cur);
      cur = parentKey.get(cur);
    }
  }
  const folded = new Map();  // id -> the group id it is folded into
  const members = new Map();
  const groups = [];
  const foldInto = (id, gid) => {
    const stack = [id];
    while (stack.length) {
      const cur = stack.pop();
      if (folded.has(cur) || keep.has(cur)) continue;
      folded.set(cur, gid);
      for (const c of children.get(cur) || []) stack.push(c);
    }
  };
  for (const [key, ids] of children) {
    const byKind = new Map();
    for (const id of ids) {
      const k = nodes.get(id).kind;
      if (!byKind.has(k)) byKind.set(k, []);
      byKind.get(k).push(id);
    }
    const min = key.startsWith("root:") ? ROOT_GROUP_MIN : GROUP_MIN;
    for (const [kind, list] of byKind) {
      if (list.length <= min) continue;
      const gid = key.startsWith("root:") ? `group:${key}` : `group:${key}:${kind}`;
      list.sort((a, b) => nodes.get(a).name.localeCompare(nodes.get(b).name));
      const open = state.expanded.get(gid) || 0;
      const hidden = list.slice(open).filter((id) => !keep.has(id));
      members.set(gid, list);
      if (!hidden.length) continue;
      for (const id of hidden) foldInto(id, gid);
      const ns = nodes.get(list[0]).namespace;
      groups.push({gid, key, kind, ns, hidden});
    }
  }
  const groupByGid = new Map(groups.map((g) => [g.gid, g]));
  // a node folded inside a group that is itself folded is drawn as the outermost group
  const drawnAs = (id) => {
    let cur = id, guard = 0;
    while (folded.has(cur) && guard++ < 64) {
      const gid = folded.get(cur);
      const g = groupByGid.get(gid);
      const owner = g && !g.key.startsWith("root:") ? g.key : null;
      if (!owner || !folded.has(owner)) return gid;
      cur = owner;
    }
    return cur;
  };
  const marks = state.marks || {};
  const refMarks = marks.references || {};
  const findings = marks.findings || {};
  const chainNodes = new Set(), chainEdges = new Set(), leaves = new Set();
  for (const chain of Object.values(marks.chains || {})) {
    for (const [o, d] of chain.edges) { chainNodes.add(o); chainNodes.add(d); chainEdges.add(o + ">" + d); }
    for (const l of chain.leaves) leaves.add(l);
  }
  const wi = whatIfClasses(state.whatif);
  const elements = [];
  const missing = new Map();
  const edges = new Map();
  for (const n of nodes.values()) {
    if (folded.has(n.id)) continue;
    const classes = ["obj"];
    if (n.deleting) classes.push("deleting");
    if (n.external) classes.push("external");
    if (n.uid && chainNodes.has(n.uid)) classes.push("chain");
    if (n.uid && leaves.has(n.uid)) classes.push("leaf");
    if (n.uid && findings[n.uid]) classes.push("finding");
    if (wi.has(n.uid)) classes.push(wi.get(n.uid));
    if (state.selected === n.id) classes.push("selected");
    elements.push({group: "nodes", data: {id: n.id, label: nodeLabel(n), kind: n.kind, order: `${n.kind}\n${n.name}`}, classes: classes.join(" ")});
  }
  for (const g of groups) {
    if (drawnAs(g.hidden[0]) !== g.gid) continue;  // inside another folded group
    const plural = g.kind.endsWith("s") ? g.kind + "es" : g.kind + "s";
    const shownAlready = (members.get(g.gid).length - g.hidden.length);
    const dying = g.hidden.filter((id) => nodes.get(id).deleting).length;
    const label = `${shownAlready ? g.hidden.length + " more" : g.hidden.length} ${plural}` +
      (g.key.startsWith("root:") && !state.namespace && g.ns ? `\nin ${g.ns}` : "") +
      (dying ? `\n${dying} Terminating` : "") + "\n(click to expand)";
    const classes = ["group"];
    if (dying) classes.push("deleting");
    if (g.hidden.some((id) => chainNodes.has(nodes.get(id).uid))) classes.push("chain");
    if (state.selected === g.gid) classes.push("selected");
    elements.push({group: "nodes", data: {id: g.gid, label, kind: g.kind, count: g.hidden.length, order: `${g.kind}\n\uffff`}, classes: classes.join(" ")});
  }
  const addEdge = (source, target, info) => {
    if (source === target) return;
    const id = source + "->" + target;
    const prev = edges.get(id);
    if (prev) { for (const c of info) prev.add(c); return; }
    edges.set(id, new Set(info));
  };
  for (const n of nodes.values()) {
    const target = drawnAs(n.id);
    for (const ref of n.owners || []) {
      let source = ref.uid && byUid.get(ref.uid);
      const info = [];
      const verdict = (refMarks[n.uid] || {})[ref.uid];
      if (verdict) info.push(verdict);
      if (ref.controller) info.push("controller");
      if (ref.blockOwnerDeletion) info.push("block");
      if (n.uid && chainEdges.has(ref.uid + ">" + n.uid)) info.push("chain");
      if (!source) {
        source = "missing:" + (ref.uid || `${ref.kind}/${ref.name}`);
        if (!missing.has(source)) missing.set(source, {ref, verdict});
        if (!verdict) info.push("unresolved");
      } else {
        source = drawnAs(source);
      }
      addEdge(source, target, info);
    }
  }
  for (const [id, {ref, verdict}] of missing) {
    if (folded.has(id)) continue;
    const why = verdict === "invalid" ? "invalid reference" : verdict === "dangling" ? "missing owner" : "not shown here";
    elements.push({group: "nodes", data: {id, label: `${ref.kind}\n${ref.name}\n(${why})`, kind: ref.kind, order: `${ref.kind}\n${ref.name}`}, classes: "missing " + (verdict || "")});
  }
  const orderOf = new Map(elements.map((e) => [e.data.id, e.data.order]));
  for (const [id, info] of edges) {
    const [source, target] = id.split("->");
    elements.push({group: "edges", data: {id, source, target, order: orderOf.get(target)}, classes: [...info].join(" ")});
  }
  const parentOf = new Map();
  for (const [id, key] of parentKey) if (!folded.has(id)) parentOf.set(id, key.startsWith("root:") ? null : drawnAs(key));
  for (const g of groups) parentOf.set(g.gid, g.key.startsWith("root:") ? null : drawnAs(g.key));
  return {elements, counted, deleting, members, parentOf, folded};
}

function whatIfClasses(whatif) {
  const out = new Map();
  if (!whatif || !whatif.result) return out;
  for (const [name, cls] of [["deleted", "wi-deleted"], ["orphaned", "wi-orphaned"], ["survives", "wi-survives"], ["hangs", "wi-hangs"]]) {
    for (const ref of whatif.result[name] || []) if (ref.id) out.set(ref.id, cls);
  }
  return out;
}

window.kubegcModel = {buildView, primaryOwner, GROUP_MIN, ROOT_GROUP_MIN, PAGE};
})();
