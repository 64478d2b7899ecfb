/* The side panel: an object's details from the tools' JSON — each doctor finding as
 * blocks (cause, blocking chain, the one action with a copy button, the evidence folded
 * in a <details>), the deletion's timeline, why, ancestors and descendants — and the
 * what-if's result. Text is built with
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

function block(parent, cls, title) {
  const b = el("div", undefined, "block " + cls);
  b.dataset.block = cls;
  b.appendChild(el("h3", title));
  parent.appendChild(b);
  return b;
}

function folded(parent, summary, lines, cls) {
  const d = el("details", undefined, cls);
  d.appendChild(el("summary", summary));
  d.appendChild(el("pre", lines.length ? lines.join("\n") : "none"));
  parent.appendChild(d);
  return d;
}

/* the blocking dependents, down to the leaves that hold the deletion, as nested lists */
function chainList(nodes) {
  const ol = el("ol", undefined, "links");
  for (const b of nodes || []) {
    const li = el("li");
    li.appendChild(el("span", refText(b.object), "ref"));
    li.appendChild(el("span", `: ${b.state}; holds because ${b.holdsBecause}`));
    if (b.blockingDependents && b.blockingDependents.length) li.appendChild(chainList(b.blockingDependents));
    ol.appendChild(li);
  }
  return ol;
}

let copied = null;  // the command last copied: its button says so across re-renders

/* the action: one command (copied by its button) or, without one, the fix's first step */
function actionBlock(parent, f, causes) {
  const withCommand = causes.find((c) => c.commands && c.commands.length);
  const cause = withCommand || causes[0];
  const fix = (cause && cause.fix && cause.fix.length ? cause.fix : f.fix) || [];
  const b = block(parent, "action", "What to do");
  if (!fix.length && !withCommand) { b.appendChild(el("p", "nothing to do")); return; }
  if (fix.length) b.appendChild(el("p", fix[0], "step"));
  if (withCommand) {
    const command = withCommand.commands[0];
    const row = el("div", undefined, "command");
    const code = el("code", command);
    row.dataset.command = command;
    const button = el("button", "copy", "copy");
    button.type = "button";
    button.dataset.copy = command;
    button.setAttribute("aria-label", "copy the command to the clipboard");
    if (copied === command) button.textContent = "copied";
    button.addEventListener("click", async () => {
      try { await navigator.clipboard.writeText(command); copied = command; button.textContent = "copied"; }
      catch (e) { button.textContent = "copy failed: select the command"; }
    });
    row.append(code, button);
    b.appendChild(row);
    if (withCommand.byHand) b.appendChild(el("p", `by hand: ${withCommand.byHand}`, "hint"));
    if (withCommand.commands.length > 1) folded(b, `the same for ${withCommand.commands.length - 1} more`, withCommand.commands.slice(1), "more");
  }
  if (fix.length > 1) folded(b, "other steps", fix.slice(1), "more");
}

const CHAIN_SHOWN = 5;  // leaves' chains shown; the others folded

/* one finding as blocks: the cause, the chain, the one action, the evidence folded */
function findingBlocks(parent, f, i, rootCauses, marked) {
  const box = el("section", undefined, "finding");
  box.dataset.kind = f.kind;
  box.dataset.severity = f.severity;
  box.appendChild(el("h3", `[${f.severity}] ${f.kind}: ${f.title}`, `sev-${f.severity}`));
  const causes = rootCauses.filter((c) => (c.findings || []).includes(i));
  const cause = block(box, "cause", "Cause");
  const held = causes.length ? causes : (f.causes || []).map((c) => ({title: c.object ? `${refText(c.object)}: ${c.cause}` : c.cause, next: []}));
  if (!held.length) cause.appendChild(el("p", f.title));
  for (const c of held) {
    cause.appendChild(el("p", c.title, "what"));
    const at = (c.at || []).filter((r) => r.uid !== f.object.uid);
    if (at.length) cause.appendChild(el("p", "on " + at.slice(0, 5).map(refText).join(", ") + (at.length > 5 ? ` and ${at.length - 5} more` : ""), "at"));
    if (c.next && c.next.length) cause.appendChild(el("p", c.next[0], "hint"));
  }
  if ((f.blockingDependents || []).length || marked) {
    const chain = block(box, "chain", "Blocking chain (what holds this foreground deletion, down to the leaf)");
    const lines = (f.chain || []).length ? f.chain : (marked ? marked.text : []);
    if (lines.length) chain.appendChild(el("pre", lines.slice(0, CHAIN_SHOWN).join("\n"), "chain"));
    if (lines.length > CHAIN_SHOWN) folded(chain, `${lines.length - CHAIN_SHOWN} more`, lines.slice(CHAIN_SHOWN), "more");
    else if (!lines.length) chain.appendChild(chainList(f.blockingDependents));
  }
  actionBlock(box, f, causes);
  folded(box, "evidence", findingLines(f), "evidence");
  parent.appendChild(box);
}

function timelineBlock(parent, steps) {
  if (!steps || !steps.length) return;
  const b = block(parent, "timeline", "Deletion timeline");
  const ol = el("ol", undefined, "timeline");
  for (const s of steps) {
    const li = el("li");
    li.dataset.step = s.step;
    li.dataset.source = s.source;
    li.append(el("time", s.time), el("span", ` ${s.step}: `, "step"), el("span", s.text));
    ol.appendChild(li);
  }
  b.appendChild(ol);
}

function whyBlock(parent, why) {
  parent.appendChild(el("h2", "Why"));
  parent.appendChild(el("p", why.conclusion, "conclusion"));
  const lines = [];
  for (const e of why.entries || []) lines.push(`${e.time} ${e.source} ${e.action} ${e.reason}: ${e.message}`);
  for (const n of why.notes || []) lines.push("note: " + n);
  if (lines.length) folded(parent, "evidence", lines, "evidence");
}

/* details: the /ui/api/details answer; chain: the doctor's chain mark for it, if any */
function renderDetails(box, node, details, chain) {
  const open = openFolds(box);
  box.replaceChildren();
  box.appendChild(el("p", refText(node) + (node.uid ? `  (uid ${node.uid})` : ""), "title"));
  const state = node.deleting
    ? `${node.terminating || "Terminating since " + node.deleting}; finalizers left: ${node.finalizers.length ? node.finalizers.join(", ") : "none"}`
    : `${node.status !== "-" ? node.status : "live"}${node.ready !== "-" ? " (ready " + node.ready + ")" : ""}; finalizers: ${node.finalizers.length ? node.finalizers.join(", ") : "none"}`;
  box.appendChild(el("p", state));
  if (node.external) box.appendChild(el("p", "(outside the namespace shown: an owner of objects in it)", "hint"));
  if (!details) {
    if (chain && chain.text.length) section(box, "Blocking chain (what holds this foreground deletion, down to the leaf)", chain.text, "chain");
    box.appendChild(el("p", "loading the doctor's answers…", "hint"));
    return;
  }
  box.appendChild(el("h2", "Doctor"));
  const chained = details.doctor.findIndex((f) => (f.blockingDependents || []).length);
  details.doctor.forEach((f, i) => findingBlocks(box, f, i, details.rootCauses || [], i === chained || (chained < 0 && i === 0) ? chain : null));
  if (!details.doctor.length) {
    if (chain && chain.text.length) section(box, "Blocking chain (what holds this foreground deletion, down to the leaf)", chain.text, "chain");
    box.appendChild(el("p", "nothing wrong with it"));
  }
  timelineBlock(box, details.timeline);
  whyBlock(box, details.why);
  section(box, "Ancestors (owners, up)", treeLines(details.ancestors.root, 0, []));
  section(box, "Descendants (dependents, down)", treeLines(details.descendants.root, 0, []));
  reopen(box, open);
}

/* which folds the reader opened (by position), so a refresh keeps them open */
function openFolds(box) {
  const key = box.dataset.foldsFor;
  return {key, open: [...box.querySelectorAll("details")].map((d) => d.open)};
}

function reopen(box, before) {
  const key = box.dataset.id || "";
  box.dataset.foldsFor = key;
  if (before.key !== key) return;
  box.querySelectorAll("details").forEach((d, i) => { if (before.open[i]) d.open = true; });
}

/* a deleted object; details: the /ui/api/details answer about it (why, the timeline) */
function renderGone(box, node, details) {
  const open = openFolds(box);
  box.replaceChildren();
  box.appendChild(el("p", refText(node), "title"));
  box.appendChild(el("p", "deleted: it is gone from the cluster"));
  if (!details) return;
  timelineBlock(box, details.timeline);
  whyBlock(box, details.why);
  reopen(box, open);
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
