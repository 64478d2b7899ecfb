/* The side panel as text: an object's details (the doctor's answers, why, ancestors and
 * descendants, from the tools' JSON) and the what-if's result. Text is built with
 * textContent only: nothing from the cluster is ever parsed as HTML. */
(() => {
"use strict";

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}

function refText(ref) {
  return `${ref.kind}/${ref.name}` + (ref.namespace ? ` -n ${ref.namespace}` : "");
}

function section(parent, title, lines, cls) {
  parent.appendChild(el("h2", title));
  parent.appendChild(el("pre", lines.length ? lines.join("\n") : "none", cls));
}

function treeLines(node, depth, out) {
  for (const child of node.children || []) {
    const st = child.state;
    const edge = child.edge ? ` [${[child.edge.controller ? "controller" : "", child.edge.blockOwnerDeletion ? "blockOwnerDeletion" : "", child.edge.reference !== "ok" ? child.edge.reference : ""].filter(Boolean).join(", ")}]` : "";
    const state = st ? `${st.status !== "-" ? " " + st.status : ""}${st.deletionTimestamp ? " since " + st.deletionTimestamp : ""}${st.finalizers.length ? " finalizers: " + st.finalizers.join(", ") : ""}` : " (not in the cluster)";
    out.push("  ".repeat(depth) + refText(child.object) + state + edge + (child.repeated ? " (cycle)" : ""));
    treeLines(child, depth + 1, out);
  }
  return out;
}

// a remover's "alive" verdict (tools/finalizers.py Alive), in words
const RUNS = {"alive": "running", "not alive": "not running", "unknown": "not known to be running"};

function removerLines(removers) {
  return (removers || []).map((r) => `finalizer ${r.finalizer}: removed by ${r.who} (${RUNS[r.alive] || r.alive})` +
    (r.removesWhen ? `, when ${r.removesWhen}` : "") + (r.skips ? `; removing it by hand skips: ${r.skips}` : ""));
}

function findingLines(f) {
  const out = [`[${f.severity}] ${f.kind}: ${f.title}`];
  if (f.deletion) out.push(`deleting since ${f.deletion.deletionTimestamp} (${f.deletion.deletingForSeconds}s; delete requested ${f.deletion.requested})`);
  for (const line of removerLines(f.finalizers)) out.push(line);
  for (const fact of f.facts || []) out.push("fact: " + fact);
  const walk = (nodes, depth) => {
    for (const b of nodes || []) {
      out.push(`${"  ".repeat(depth)}blocked by ${refText(b.object)}: ${b.state}; holds because ${b.holdsBecause}`);
      for (const line of removerLines(b.finalizers)) out.push(`${"  ".repeat(depth + 1)}${line}`);
      walk(b.blockingDependents, depth + 1);
    }
  };
  walk(f.blockingDependents, 0);
  for (const n of f.next || []) out.push("next: " + n);
  for (const x of f.fix || []) out.push("fix: " + x);
  return out;
}

/* details: the /ui/api/details answer; chain: the doctor's chain mark for it, if any */
function renderDetails(box, node, details, chain) {
  box.replaceChildren();
  box.appendChild(el("p", refText(node) + (node.uid ? `  (uid ${node.uid})` : ""), "title"));
  const state = node.deleting
    ? `${node.terminating || "Terminating since " + node.deleting}; finalizers left: ${node.finalizers.length ? node.finalizers.join(", ") : "none"}`
    : `${node.status !== "-" ? node.status : "live"}${node.ready !== "-" ? " (ready " + node.ready + ")" : ""}; finalizers: ${node.finalizers.length ? node.finalizers.join(", ") : "none"}`;
  box.appendChild(el("p", state));
  if (node.external) box.appendChild(el("p", "(outside the namespace shown: an owner of objects in it)", "hint"));
  if (chain && chain.text.length) {
    section(box, "Blocking chain (what holds this foreground deletion, down to the leaf)", chain.text, "chain");
  }
  if (!details) { box.appendChild(el("p", "loading the doctor's answers…", "hint")); return; }
  const doctor = [];
  for (const f of details.doctor) doctor.push(...findingLines(f), "");
  section(box, "Doctor", doctor.length ? doctor : ["nothing wrong with it"]);
  const why = details.why;
  const whyLines = [why.conclusion];
  for (const e of why.entries || []) whyLines.push(`${e.time} ${e.source} ${e.action} ${e.reason}: ${e.message}`);
  for (const n of why.notes || []) whyLines.push("note: " + n);
  section(box, "Why", whyLines);
  section(box, "Ancestors (owners, up)", treeLines(details.ancestors.root, 0, []));
  section(box, "Descendants (dependents, down)", treeLines(details.descendants.root, 0, []));
}

function renderGone(box, node) {
  box.replaceChildren();
  box.appendChild(el("p", refText(node), "title"));
  box.appendChild(el("p", "deleted: it is gone from the cluster"));
}

const WHATIF_HEADINGS = [["deleted", "deleted"], ["orphaned", "orphaned (no owner left, stays)"], ["survives", "survives (kept by another owner)"], ["hangs", "hangs (still deleting when the simulation went quiet)"]];

function renderWhatIf(pre, node, answer) {
  const r = answer.result;
  const lines = [`What if ${refText(node)} is deleted (propagationPolicy ${answer.policy})?`,
    "Simulated on an in-memory copy: nothing was written to the cluster."];
  if (answer.plan.error) lines.push(`the delete itself fails: ${answer.plan.error}`);
  for (const [key, title] of WHATIF_HEADINGS) {
    lines.push("", `${title} (${r[key].length}):`);
    for (const ref of r[key]) lines.push("  " + refText(ref));
    if (!r[key].length) lines.push("  none");
  }
  for (const w of answer.plan.warnings || []) lines.push("warning: " + w);
  pre.textContent = lines.join("\n");
}

window.kubegcPanel = {renderDetails, renderGone, renderWhatIf, refText};
})();
