// The page of `step-planner hmi`: renders the state the server pushes over one WebSocket and sends what the
// person does (send, confirm, answer, cancel). No framework, no build step; text is set with textContent only.
"use strict";

const $ = (id) => document.getElementById(id);
let socket = null;
let state = null;
let shownConfirm = "";

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function say(ok, text) {
  $("message").textContent = text;
  $("message").className = ok ? "" : "refused";
}

function send(message) {
  if (!socket || socket.readyState !== WebSocket.OPEN) { say(false, "not connected"); return; }
  socket.send(JSON.stringify(message));
}

function connect() {
  socket = new WebSocket(`ws://${location.host}/ws`);
  socket.onopen = () => { $("conn").textContent = "connected"; $("conn").className = "badge"; };
  socket.onclose = () => {
    $("conn").textContent = "disconnected"; $("conn").className = "badge off";
    setTimeout(connect, 1000);
  };
  socket.onmessage = (event) => {
    const data = JSON.parse(event.data);
    if (data.type === "reply") say(data.ok, data.message);
    else if (data.type === "state") { state = data; render(); }
  };
}

function factLine(fact) {  // a fact with its truth: {text, holds, words, judged_from, ...}
  const li = el("li");
  if (fact.holds !== undefined) li.append(el("span", fact.holds ? "yes" : "no", fact.holds ? "✓ " : "✗ "));
  li.append(el("span", "", fact.words || fact.text));
  if (fact.words && fact.text) li.append(" ", el("span", "fact muted", fact.text));
  if (fact.judged_from) li.append(" ", el("span", "muted", `(${fact.judged_from})`));
  return li;
}

const NODE_SHOWN = new Set(["id", "parent_id", "child_ids", "depth", "text", "status", "is_active", "primitive",
  "outcome_code", "outcome_message", "verdict", "verdict_reason", "verdict_source", "conditions",
  "conditions_from", "control", "prepared"]);

function renderNode(node, byId, activeId) {
  const li = el("li", "node" + (node.id === activeId || node.is_active ? " active" : ""));
  li.dataset.status = node.status;
  li.dataset.id = node.id;
  const row = el("div", "row");
  row.append(el("span", "status", node.status), el("span", "text", node.text));
  if (node.primitive) row.append(" ", el("span", "fact", `⚙ ${node.primitive}`));
  if (node.outcome_code) row.append(" ", el("span", node.outcome_code === "SUCCESS" ? "yes" : "no",
    `→ ${node.outcome_code}`));
  li.append(row);
  const details = [];
  if (node.verdict) details.push(`${node.verdict} (${node.verdict_source}): ${node.verdict_reason}`);
  if (node.outcome_message && node.outcome_code !== "SUCCESS") details.push(node.outcome_message);
  for (const c of node.conditions || []) details.push(`${c.holds ? "✓" : "✗"} ${c.text}`);
  for (const [key, value] of Object.entries(node)) {  // fields this page does not know yet, as they come
    if (!NODE_SHOWN.has(key) && value !== "" && value !== null && typeof value !== "object" && value !== false)
      details.push(`${key}: ${value}`);
  }
  for (const d of details) li.append(el("div", "detail", d));
  const kids = (node.child_ids || []).map((id) => byId.get(id)).filter(Boolean);
  if (kids.length) {
    const ul = el("ul");
    for (const kid of kids) ul.append(renderNode(kid, byId, activeId));
    li.append(ul);
  }
  return li;
}

function renderTree(tree) {
  const box = $("tree");
  box.replaceChildren();
  if (!tree || !tree.nodes || !tree.nodes.length) { box.append(el("p", "muted", "no tree yet")); return; }
  $("tree-rev").textContent = `goal ${String(tree.goal_id).slice(0, 8)}, revision ${tree.revision}`;
  const byId = new Map(tree.nodes.map((n) => [n.id, n]));
  const root = byId.get(tree.root_id) || tree.nodes[0];
  const ul = el("ul");
  ul.append(renderNode(root, byId, tree.active_id));
  box.append(ul);
}

function renderGoal(s) {
  const fb = s.feedback || {};
  const root = s.tree && s.tree.nodes && s.tree.nodes.find((n) => n.id === s.tree.root_id);
  const list = $("goal");
  list.replaceChildren();
  let facts = [];
  if (root && root.conditions && root.conditions.length) facts = root.conditions;
  else if (fb.goal && fb.goal.length) facts = fb.goal.map((f, i) => ({ text: f, words: (fb.goal_words || [])[i] }));
  if (!facts.length) list.append(el("li", "muted", "not stated yet"));
  for (const f of facts) list.append(factLine(f));
  const from = (root && root.conditions_from) || fb.goal_from || "";
  $("goal-from").textContent = from ? `stated by: ${from}` : "";
  const said = (s.words && s.words.progress) || [];
  const sentences = $("progress");
  sentences.replaceChildren(...(said.length ? said.map((line) => el("li", "", line))
    : [el("li", "muted", "nothing running")]));
  const table = $("progress-fields");
  table.replaceChildren();
  for (const [key, value] of Object.entries(fb)) {  // every feedback field, as the action defines them
    if (key === "goal" || key === "goal_words") continue;
    const tr = el("tr");
    const shown = typeof value === "number" && !Number.isInteger(value) ? value.toFixed(1) : JSON.stringify(value);
    tr.append(el("td", "", key), el("td", "", typeof value === "string" ? value : shown));
    table.append(tr);
  }
}

function renderOutcome(result, said) {  // the headline for a person; the engineer's detail collapsed below
  const box = $("outcome");
  const open = box.querySelector("details") && box.querySelector("details").open;
  box.replaceChildren();
  box.dataset.status = result ? result.status : "";
  box.dataset.goal = state.goal ? state.goal.goal_id : "";  // which goal this outcome is of (tests wait on it)
  if (!result) { box.append(el("p", "muted", "no outcome yet")); return; }
  box.dataset.tone = said ? said.tone : "";
  box.append(el("p", "headline", said ? said.headline : result.status));
  const verified = result.verified ? "checked in the world" : "not checked in the world";
  if (result.conditions && result.conditions.length) {
    box.append(el("h3", "", `Each fact at the end (${verified})`));
    const ul = el("ul", "facts");
    for (const c of result.conditions) ul.append(factLine(c));
    box.append(ul);
  }
  const details = el("details", "engineer");
  details.open = !!open;
  details.append(el("summary", "", "Engineer's detail"));
  for (const line of (said && said.detail) || [result.status, result.error_msg]) {
    details.append(el("p", "detail-inline", line));
  }
  if (result.executed_primitives && result.executed_primitives.length) {
    details.append(el("h3", "", "What the arm did"));
    const ol = el("ol");
    for (const p of result.executed_primitives) ol.append(el("li", "fact", p));
    details.append(ol);
  }
  box.append(details);
}

let cameraTimer = null;
let cameraFrames = 0;
function renderCamera(camera) {  // the panel is there only once a camera sent a frame; it fetches the latest itself
  $("camera-card").hidden = !camera;
  if (!camera) { clearTimeout(cameraTimer); cameraTimer = null; return; }
  $("camera-source").textContent = camera.source;
  if (cameraTimer !== null) return;
  const img = $("camera");
  const next = (delay) => { cameraTimer = setTimeout(() => { img.src = `/camera.jpg?frame=${++cameraFrames}`; }, delay); };
  img.onload = () => { img.dataset.frames = String(cameraFrames); next(250); };  // about four a second
  img.onerror = () => next(1000);
  next(0);
}

let shownPicture = "";
function renderPicture(svgText) {  // the server draws it (step_planner/viz/table_svg.py); parsed as SVG, not HTML
  if (svgText === shownPicture) return;
  const box = $("picture");
  const doc = svgText ? new DOMParser().parseFromString(svgText, "image/svg+xml") : null;
  if (!doc || doc.querySelector("parsererror") || doc.documentElement.localName !== "svg") {
    if (!svgText) box.replaceChildren(el("p", "muted", "no picture of the table yet"));
    return;
  }
  for (const bad of doc.querySelectorAll("script, foreignObject")) bad.remove();
  box.replaceChildren(document.importNode(doc.documentElement, true));
  shownPicture = svgText;
}

function renderDialogue(dialogue) {  // each exchange: what was asked, the reply, and whatever else it carries
  const ol = $("dialogue");
  ol.replaceChildren();
  $("dialogue-card").hidden = !dialogue || !dialogue.length;  // shown once the goal asked the person something
  if (!dialogue || !dialogue.length) return;
  for (const d of dialogue) {
    const li = el("li");
    const asked = d.kind === "goal_confirmation" ? "confirm the goal" : "asked";
    li.append(el("div", "", `${asked}: ${d.text}`));
    const reply = d.reply || {};
    const said = [reply.text, (reply.facts || []).join("; ")].filter(Boolean).join(" ");
    li.append(el("div", "answer", `reply (${reply.kind || "?"}): ${said}`));
    const extra = [];
    for (const [key, value] of Object.entries(d)) {
      if (!["kind", "text", "facts", "words", "reply"].includes(key) && value !== "" && value !== null)
        extra.push(`${key}: ${typeof value === "object" ? JSON.stringify(value) : value}`);
    }
    for (const [key, value] of Object.entries(reply)) {
      if (!["kind", "text", "facts"].includes(key) && value !== "" && value !== null)
        extra.push(`${key}: ${typeof value === "object" ? JSON.stringify(value) : value}`);
    }
    if (extra.length) li.append(el("div", "detail-inline", extra.join(", ")));
    ol.append(li);
  }
}

function render() {
  const s = state;
  $("server").textContent = `${s.node}: ${s.server_ready ? "ready" : "not found"}`;
  $("server").className = s.server_ready ? "badge" : "badge off";
  const busy = s.goal && s.goal.status !== "ended";
  $("send").disabled = !!busy;
  $("cancel").disabled = !busy;
  document.body.classList.toggle("running", !!busy);
  const goalText = (s.waiting || {}).goal_confirmation || "";
  $("confirm").hidden = !goalText;
  if (goalText && goalText !== shownConfirm) {  // a new goal to confirm: show it, offer its facts to correct
    shownConfirm = goalText;
    const ul = $("confirm-goal");
    ul.replaceChildren();
    const facts = [];
    for (const line of goalText.split("\n")) {
      const at = line.indexOf("): ");
      const fact = at >= 0 ? line.slice(0, at + 1) : line;
      facts.push(fact);
      ul.append(factLine({ text: fact, words: at >= 0 ? line.slice(at + 3) : "" }));
    }
    $("facts").value = facts.join("\n");
  }
  if (!goalText) shownConfirm = "";
  const question = (s.waiting || {}).question || "";
  $("ask").hidden = !question;
  $("question").textContent = question;
  renderGoal(s);
  renderTree(s.tree);
  renderDialogue(s.dialogue);
  renderOutcome(s.result, s.words && s.words.outcome);
  renderPicture(s.picture || "");
  renderCamera(s.camera);
  const log = $("log");
  log.replaceChildren(...s.log.map((line) => el("li", "", line)));
  log.scrollTop = log.scrollHeight;
}

document.addEventListener("DOMContentLoaded", () => {
  $("send-form").addEventListener("submit", (e) => {
    e.preventDefault();
    send({ type: "send", instruction: $("instruction").value });
  });
  $("cancel").addEventListener("click", () => send({ type: "cancel" }));
  $("accept").addEventListener("click", () => send({ type: "confirm", decision: "accept" }));
  $("correct").addEventListener("click", () => send({ type: "confirm", decision: "correct",
    facts: $("facts").value }));
  $("refuse").addEventListener("click", () => send({ type: "confirm", decision: "refuse",
    reason: $("reason").value }));
  $("answer-form").addEventListener("submit", (e) => {
    e.preventDefault();
    send({ type: "answer", answer: $("answer").value });
    $("answer").value = "";
  });
  connect();
});
