// refgate ui: plain JavaScript, no library, no build step.
// Text from the server's JSON (questions, file names, events) is set with textContent only; the
// one HTML the page inserts is a thread's body, rendered by refgate's HTML report (autoescaped),
// under a Content-Security-Policy that allows no inline script.
"use strict";

const $ = (id) => document.getElementById(id);
const PASS_NAMES = { brief: "BRIEF", work: "WORK", critique: "CRITIQUE", compose: "COMPOSE",
  gate: "GATE", harvest: "HARVEST", deliver: "DELIVER" };

const ui = {
  csrf: "",
  workspace: "",
  thread: "",
  run: "",
  source: null,
  extras: {},
  started: 0,
  timer: 0,
  passItem: null,
  opener: null,
};

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

function setStatus(text, isError) {
  const s = $("status");
  s.textContent = text || "";
  s.classList.toggle("error", !!isError);
}

async function api(path, options) {
  const opts = Object.assign({ credentials: "same-origin", headers: {} }, options || {});
  if (opts.method === "POST") {
    opts.headers["content-type"] = "application/json";
    opts.headers["x-refgate-csrf"] = ui.csrf;
  }
  const res = await fetch(path, opts);
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(data.error || `request failed (${res.status})`);
  return data;
}

const q = (params) => new URLSearchParams(params).toString();

// ---- workspaces -------------------------------------------------------------------------

async function start() {
  const session = await api("/api/session");
  ui.csrf = session.csrf;
  const select = $("ws-select");
  select.replaceChildren(...session.workspaces.map((w) => el("option", { value: w, text: w })));
  if (session.workspaces.length) await openWorkspace(session.workspaces[0]);
  else setStatus("No workspace: start refgate ui with -w, or set REFGATE_ALLOWED_WORKSPACES.", true);
}

async function openWorkspace(path) {
  const info = await api("/api/workspace?" + q({ workspace: path }));
  ui.workspace = path;
  $("ws-select").value = path;
  showWorkspace(info);
  newThread();
  await loadThreads();
}

function showWorkspace(info) {
  const box = $("ws-info");
  const parts = [el("h2", { text: info.name })];
  parts.push(el("h3", { text: `Datasets (${info.datasets.length})` }));
  parts.push(el("ul", {}, ...info.datasets.map((d) =>
    el("li", { title: d.description }, el("code", { text: d.name }), ` ${d.path} · ${d.columns} columns`))));
  if (info.documents) {
    parts.push(el("h3", { text: `Documents (${info.documents.count})` }));
    const det = el("details", {}, el("summary", { text: `${info.documents.folder}/` }),
      el("ul", {}, ...info.documents.files.map((f) => el("li", { text: f }))));
    parts.push(det);
  }
  const idx = info.index;
  const state = idx.built
    ? `index: ${idx.documents} document(s), built ${idx.updated}` +
      (idx.not_indexed.length ? `; not indexed: ${idx.not_indexed.length}` : "; up to date")
    : "index: not built (refgate index)";
  parts.push(el("p", { class: "index-state", text: state }));
  box.replaceChildren(...parts);
}

async function loadThreads() {
  const data = await api("/api/threads?" + q({ workspace: ui.workspace }));
  const list = $("thread-list");
  list.replaceChildren(...data.threads.map((t) => {
    const b = el("button", { type: "button", "data-thread": t.thread,
      "aria-current": t.thread === ui.thread ? "true" : "false" },
      el("span", { class: "q", text: t.question || `(thread ${t.thread})` }),
      el("span", { class: "meta" }, el("span", { class: `st ${t.status}`, text: t.status }),
        ` · ${(t.date || "").replace("T", " ").slice(0, 19)}`));
    b.addEventListener("click", () => openThread(t.thread));
    return el("li", {}, b);
  }));
}

function newThread() {
  ui.thread = "";
  $("thread-body").replaceChildren();
  $("extra-facts").hidden = true;
  $("downloads").hidden = true;
  $("resume-btn").hidden = true;
  closeEvidence();
  $("question-label").textContent = "Question";
  for (const b of document.querySelectorAll("#thread-list button")) b.setAttribute("aria-current", "false");
}

// ---- a thread ---------------------------------------------------------------------------

async function openThread(thread) {
  ui.thread = thread;
  setStatus("Opening the thread…");
  const data = await api("/api/thread?" + q({ workspace: ui.workspace, thread }));
  showThread(data);
  for (const b of document.querySelectorAll("#thread-list button")) {
    b.setAttribute("aria-current", b.dataset.thread === thread ? "true" : "false");
  }
  setStatus(data.next && data.next.length
    ? `This run stopped before ${data.next.join(", ")}: press Resume to finish it.` : "");
}

function showThread(data) {
  const body = $("thread-body");
  // The report renderer's HTML: every string from a model, document or web page is escaped
  // by its templates; the CSP forbids inline script should anything slip through.
  body.innerHTML = data.html || "";
  ui.extras = data.extras || {};
  ui.bindings = data.bindings || [];
  linkNumbers(body.querySelector("#answer"));
  for (const a of body.querySelectorAll("a[href^='#']")) a.dataset.anchor = a.getAttribute("href").slice(1);
  const withheld = data.withheld || [];
  const extra = $("extra-facts");
  extra.hidden = !withheld.length;
  if (withheld.length) {
    extra.replaceChildren(el("h2", { text: "Withheld (not read into any claim)" }),
      el("ul", { class: "withheld" }, ...withheld.map((w) => el("li", { text: w }))));
  }
  const hasAnswer = !!data.html;
  $("downloads").hidden = !hasAnswer;
  for (const fmt of ["html", "pdf", "docx", "json"]) {
    $(`dl-${fmt}`).href = "/api/download?" + q({ workspace: ui.workspace, thread: data.thread, format: fmt });
  }
  $("resume-btn").hidden = !(data.next && data.next.length);
  $("question-label").textContent = hasAnswer ? "Follow-up question" : "Question";
}

// Numbers of the answer link to the evidence the GATE bound them to (the verdict's claims:
// each mention's first matched ref); a number it did not bind links to the citation that
// follows it (same sentence cell or paragraph): one click from a number to its card.
const NUMBER = /\b\d{4}(?:Q[1-4]|-\d{2}(?:-\d{2})?)\b|\d[\d,.]*\d%?|\d%?/g;
// Text as the answer shows it, without citations or extra spaces (to find a claim's block).
const bare = (t) => t.replace(/\[[^\]]*\]/g, " ").replace(/\s+/g, " ").trim();
const numbersOf = (t) => [...t.matchAll(NUMBER)].map((m) => m[0]);

function bindingsIn(block) {
  const shown = bare(block.textContent);
  const out = [];
  for (const c of ui.bindings || []) {
    const claim = bare(c.claim);
    if (!claim || !shown.includes(claim)) continue;
    for (const m of c.mentions) out.push({ nums: numbersOf(m.text), anchor: m.anchor, used: false });
  }
  return out;
}

function linkNumbers(answer) {
  if (!answer) return;
  const blocks = answer.querySelectorAll("p, li, td");
  for (const block of blocks) {
    const cites = [...block.querySelectorAll("a.cite")];
    if (!cites.length) continue;
    const bound = bindingsIn(block);
    const walker = document.createTreeWalker(block, NodeFilter.SHOW_TEXT);
    const texts = [];
    while (walker.nextNode()) texts.push(walker.currentNode);
    for (const node of texts) {
      if (node.parentElement.closest("a, s, em, code")) continue;
      const next = cites.find((c) => node.compareDocumentPosition(c) & Node.DOCUMENT_POSITION_FOLLOWING);
      const text = node.nodeValue;
      const found = [...text.matchAll(NUMBER)];
      if (!found.length || (!next && !bound.length)) continue;
      const frag = document.createDocumentFragment();
      let at = 0;
      for (const m of found) {
        frag.append(text.slice(at, m.index));
        at = m.index + m[0].length;
        const gate = bound.find((b) => !b.used && b.nums.includes(m[0]));
        if (gate) gate.used = true;
        const href = gate ? "#" + gate.anchor : next && next.getAttribute("href");
        if (!href) { frag.append(m[0]); continue; }
        const link = el("a", { class: "num", href, text: m[0],
          title: gate ? `evidence for ${m[0]} (bound by the GATE)` : `evidence for ${m[0]}` });
        if (gate) link.dataset.bound = "gate";
        frag.append(link);
      }
      frag.append(text.slice(at));
      node.replaceWith(frag);
    }
  }
}

// ---- evidence ---------------------------------------------------------------------------

function openEvidence(anchor, number) {
  const card = document.getElementById(anchor);
  if (!card || !card.matches("article.card")) return false;
  const copy = card.cloneNode(true);
  copy.removeAttribute("id");
  copy.dataset.anchor = anchor;
  for (const d of copy.querySelectorAll("details.code")) d.open = true;
  const parts = [copy];
  const facts = cellFacts(copy, number);
  if (facts) parts.unshift(facts);
  const extra = ui.extras[anchor];
  if (extra && extra.gate && extra.gate.length) parts.unshift(gateChecks(extra.gate));
  if (extra && extra.type === "pdf") parts.push(pageView(extra));
  if (extra && extra.type === "web") parts.push(webFacts(extra));
  $("evidence-body").replaceChildren(...parts);
  const panel = $("evidence-panel");
  panel.hidden = false;
  document.querySelector(".layout").classList.add("with-panel");
  panel.focus();
  return true;
}

function closeEvidence() {
  const wasOpen = !$("evidence-panel").hidden;
  $("evidence-panel").hidden = true;
  document.querySelector(".layout").classList.remove("with-panel");
  // keyboard users continue from the citation that opened the card
  if (wasOpen && ui.opener && document.contains(ui.opener)) ui.opener.focus();
}

// The GATE's verdict on each claim that cites this evidence: what it checked and what matched.
function gateChecks(checks) {
  return el("div", { class: "gate-checks" }, el("h3", { text: "GATE" }),
    el("ul", {}, ...checks.map((c) => el("li", { class: c.supported ? "ok" : "bad" },
      el("strong", { text: c.supported ? "verified " : "blocked " }),
      `“${c.mention}” in “${c.claim}”` + (c.how ? ` (${c.how})` : "")))));
}

// The highlighted cell in words: its row label (the row's first cell), its column and unit.
function cellFacts(card, number) {
  const cells = [...card.querySelectorAll("td.cited")];
  if (!cells.length) return null;
  // the number clicked: its own cell first, outlined
  const plain = (t) => t.replace(/[,\s]/g, "");
  const own = number ? cells.filter((td) => plain(td.textContent) === plain(number)) : [];
  for (const td of own) td.classList.add("clicked");
  const ordered = [...own, ...cells.filter((td) => !own.includes(td))];
  const lines = ordered.slice(0, 6).map((td) => {
    const row = td.parentElement;
    const table = td.closest("table");
    const col = table.querySelectorAll("thead th")[td.cellIndex];
    const label = row.querySelector("td") === td ? row.querySelector("th") : row.querySelector("td");
    const period = card.querySelector(".period");
    return el("li", {}, el("strong", { text: td.textContent }),
      ` · ${col ? col.textContent.trim() : "value"}` +
      ` · row ${label ? label.textContent.trim() : "?"}` +
      (period ? ` · ${period.textContent.trim()}` : ""));
  });
  return el("div", { class: "cell-facts" }, el("p", { text: "Cited cell (highlighted below):" }),
    el("ul", {}, ...lines));
}

function pageView(extra) {
  const params = q({ workspace: ui.workspace, thread: ui.thread, ref: extra.ref });
  const box = el("div", { class: "pagebox" });
  const img = el("img", { src: "/api/page.png?" + params,
    alt: `page ${extra.page} of ${extra.source}` });
  box.append(img);
  const caption = el("figcaption", { text: `${extra.source}, page ${extra.page}: finding the quoted sentence…` });
  api("/api/page?" + params).then((info) => {
    for (const b of info.boxes) {
      const hl = el("div", { class: "hl" });
      hl.style.left = `${b.x * 100}%`;
      hl.style.top = `${b.y * 100}%`;
      hl.style.width = `${b.w * 100}%`;
      hl.style.height = `${b.h * 100}%`;
      box.append(hl);
    }
    caption.textContent = info.found
      ? `${extra.source}, page ${info.page} of ${info.pages}: the quoted sentence is highlighted`
      : `${extra.source}, page ${info.page} of ${info.pages}: the quote was not found on the page's text layer`;
    caption.dataset.found = info.found ? "yes" : "no";
  }).catch((e) => { caption.textContent = `page not shown: ${e.message}`; });
  return el("figure", { class: "page-figure" }, box, caption);
}

function webFacts(extra) {
  return el("dl", { class: "web-facts" },
    el("dt", { text: "Address" }), el("dd", { text: extra.url }),
    el("dt", { text: "What was fetched" }), el("dd", { text: extra.fetched + (extra.query ? ` (query: ${extra.query})` : "") }),
    el("dt", { text: "When" }), el("dd", { text: extra.when || "unknown" }),
    el("dt", { text: "Provider" }), el("dd", { text: extra.provider || "unknown" }));
}

// ---- asking and the run's events --------------------------------------------------------

async function ask(event) {
  if (event) event.preventDefault();
  const question = $("question-input").value.trim();
  if (!question) { setStatus("Type a question first.", true); return; }
  startLive();
  try {
    const data = await api("/api/ask", { method: "POST",
      body: JSON.stringify({ workspace: ui.workspace, question, thread: ui.thread || null,
        kind: $("research-mode").checked ? "research" : "ask" }) });
    $("question-input").value = "";
    follow(data);
  } catch (e) { endLive(); setStatus(e.message, true); }
}

async function resume() {
  startLive();
  try {
    const data = await api("/api/resume", { method: "POST",
      body: JSON.stringify({ workspace: ui.workspace, thread: ui.thread }) });
    follow(data);
  } catch (e) { endLive(); setStatus(e.message, true); }
}

async function stop() {
  if (!ui.run) return;
  setStatus("Stopping at the next step…");
  try { await api(`/api/runs/${ui.run}/stop`, { method: "POST", body: "{}" }); }
  catch (e) { setStatus(e.message, true); }
}

function startLive() {
  $("live").hidden = false;
  $("passes").replaceChildren();
  $("stream").textContent = "";
  ui.passItem = null;
  ui.started = performance.now();
  $("ask-btn").disabled = true;
  $("resume-btn").hidden = true;
  $("stop-btn").disabled = false;
  setStatus("Running…");
  clearInterval(ui.timer);
  ui.timer = setInterval(() => {
    $("m-time").textContent = `${((performance.now() - ui.started) / 1000).toFixed(1)} s`;
  }, 100);
}

function endLive() {
  clearInterval(ui.timer);
  $("ask-btn").disabled = false;
  $("stop-btn").disabled = true;
  if (ui.source) { ui.source.close(); ui.source = null; }
}

function follow(data) {
  ui.run = data.run;
  ui.thread = data.thread;
  const source = new EventSource(`/api/runs/${data.run}/events`);
  ui.source = source;
  source.addEventListener("progress", (m) => onEvent(JSON.parse(m.data)));
  source.addEventListener("end", () => { source.close(); });
  source.onerror = () => { if (ui.source === source && source.readyState === EventSource.CLOSED) endLive(); };
}

function passLi(name, attempt) {
  const li = el("li", { class: "pass running", "data-pass": name },
    el("span", { class: "name", text: PASS_NAMES[name] || name.toUpperCase() }),
    attempt > 1 ? " (retry)" : "", el("span", { class: "outcome" }), el("ul"));
  $("passes").append(li);
  return li;
}

function onEvent(e) {
  if (typeof e.tokens === "number") $("m-tokens").textContent = `${e.tokens.toLocaleString()} tokens`;
  if (typeof e.cost_usd === "number") $("m-cost").textContent = `$${e.cost_usd.toFixed(4)} (estimated)`;
  const passes = $("passes");
  switch (e.event) {
    case "pass_started": {
      const seen = passes.querySelectorAll(`li[data-pass="${e.pass}"]`).length;
      ui.passItem = passLi(e.pass, seen + 1);
      break;
    }
    case "pass_finished": {
      const li = [...passes.querySelectorAll(`li[data-pass="${e.pass}"]`)].pop();
      if (li) {
        li.classList.remove("running");
        li.classList.add("done");
        li.querySelector(".outcome").textContent = ` ${Math.round(e.duration_ms)} ms` + (e.status ? ` · ${e.status}` : "");
      }
      break;
    }
    case "tool_call": {
      const li = ui.passItem || passLi(e.pass || "work", 1);
      li.querySelector("ul").append(el("li", { class: "tool",
        text: `${e.tool} · ${e.status}` + (e.refs && e.refs.length ? ` · ${e.refs.length} ref(s)` : "") }));
      break;
    }
    case "gate_verdict": {
      const li = [...passes.querySelectorAll('li[data-pass="gate"]')].pop() || passLi("gate", 1);
      const out = li.querySelector("ul");
      out.append(el("li", { class: e.passed ? "done" : "bad",
        text: e.passed ? "passed" : `blocked: ${(e.issues || []).join(", ")}` }));
      break;
    }
    case "research_step": {
      // the deep-research graph's steps: scope, searches, pages read, claims, votes, cuts
      const skip = ["event", "step", "seq", "ms", "tokens", "cost_usd"];
      const facts = Object.entries(e).filter(([k]) => !skip.includes(k))
        .map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join("; ") : v}`).join(" · ");
      passes.append(el("li", { class: "research", "data-step": e.step },
        el("span", { class: "name", text: (e.step || "step").toUpperCase() }), ` ${facts}`));
      break;
    }
    case "answer_delta":
      $("stream").textContent += e.text || "";
      break;
    case "notice":
    case "resuming":
    case "follow_up":
      passes.append(el("li", { class: "note", text: e.message || `${e.event.replace("_", " ")}` +
        (e.next ? `: ${e.next.join(", ")}` : e.turn ? ` (turn ${e.turn})` : "") }));
      break;
    case "stop_requested":
      setStatus("Stopping at the next step…");
      break;
    case "run_finished":
      endLive();
      setStatus(e.kind === "research"
        ? `Research finished in ${e.seconds} s${e.passed ? "" : " without a verified claim"}.`
        : `Finished in ${e.seconds} s; GATE ${e.passed ? "passed" : "blocked"}.`);
      ui.thread = e.thread;
      openThread(e.thread).then(loadThreads);
      break;
    case "run_stopped":
    case "run_failed":
      endLive();
      setStatus((e.event === "run_stopped" ? "Stopped: " : "The run failed: ") + e.message +
        // a budget stop's message says how to raise the budget, then Resume
        (e.resumable && !e.budget ? " Press Resume to go on from the last finished step." : ""),
        e.event === "run_failed");
      $("resume-btn").hidden = !e.resumable;
      loadThreads();
      break;
    default:
      break;
  }
}

// ---- wiring -----------------------------------------------------------------------------

function wire() {
  $("ws-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const typed = $("ws-path").value.trim();
    openWorkspace(typed || $("ws-select").value).catch((err) => setStatus(err.message, true));
  });
  $("ws-select").addEventListener("change", () => {
    openWorkspace($("ws-select").value).catch((err) => setStatus(err.message, true));
  });
  $("new-thread").addEventListener("click", () => { newThread(); $("question-input").focus(); });
  $("ask-form").addEventListener("submit", ask);
  $("question-input").addEventListener("keydown", (e) => {
    // Enter asks; Shift+Enter is a new line; an IME composing Korean keeps its Enter
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing && e.keyCode !== 229) ask(e);
  });
  $("stop-btn").addEventListener("click", stop);
  $("resume-btn").addEventListener("click", resume);
  $("close-evidence").addEventListener("click", closeEvidence);
  $("evidence-panel").addEventListener("keydown", (e) => { if (e.key === "Escape") closeEvidence(); });
  // one listener for every citation, number and card link of the thread
  document.addEventListener("click", (e) => {
    const a = e.target.closest("a[href^='#']");
    if (!a || !$("main").contains(a) && !$("evidence-panel").contains(a)) return;
    const anchor = a.getAttribute("href").slice(1);
    const number = a.classList.contains("num") ? a.textContent : "";
    if (!$("evidence-panel").contains(a)) ui.opener = a;
    if (anchor.startsWith("ref-") && openEvidence(anchor, number)) e.preventDefault();
  });
  start().catch((e) => setStatus(e.message, true));
}

document.addEventListener("DOMContentLoaded", wire);
