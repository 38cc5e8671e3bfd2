// The dashboard: wires the panels to the service. State lives here; each panel only draws.

import { ApiError, api, apiKey, follow, setApiKey } from "./api.js";
import { Detail } from "./detail.js";
import { clear, el } from "./dom.js";
import { Graph } from "./graph.js";
import { renderDetails, renderMemories, renderPlan, renderRuntime } from "./panels.js";
import { Timeline } from "./timeline.js";

const $ = (id) => document.getElementById(id);
const HISTORY_PAGE = 200;

const state = { memory: null, memories: [], now: 0, version: null, selected: null, stream: null, refresh: null, detail: null };
const metrics = { firstRender: null, graphLoads: 0, lastOpen: null };
window.l3mpDashboard = { metrics, state, open: openPart, get cy() { return graph.cy; }, get graph() { return graph; } };

const graph = new Graph($("graph"), (name) => showEntity(name), (id) => openPart(state.detail ? state.detail.keyOf(id) : null));
const timeline = new Timeline($("timeline"), revert);

function status(message, kind = "error") {
  const bar = $("status");
  bar.textContent = message || "";
  bar.className = `status ${kind}`;
  bar.hidden = !message;
}

function explain(error) {
  if (error instanceof ApiError) {
    if (error.status === 401) return "This service needs an API key: enter it above.";
    const reasons = error.issues.map((i) => i.message).join("; ");
    return `${error.status} ${error.code}: ${error.message}${reasons && reasons !== error.message ? ` (${reasons})` : ""}`;
  }
  return String(error && error.message ? error.message : error);
}

async function loadMemories() {
  state.memories = await api.memories();
  renderMemories($("memories").tBodies[0], state.memories, state.memory, pick);
  return state.memories;
}

function pick(name) {
  if (name === state.memory) return;
  location.hash = `memory=${encodeURIComponent(name)}`;
}

async function open(name) {
  state.memory = name;
  state.version = null;
  state.selected = null;
  $("memory-title").textContent = name;
  renderMemories($("memories").tBodies[0], state.memories, name, pick);
  clear($("details-body"));
  $("details-hint").hidden = false;
  if (state.stream) state.stream.abort();
  timeline.reset();
  const row = state.memories.find((m) => m.name === name);
  state.detail = row && row.detail === "outline" ? new Detail() : null;
  await loadGraph();
  const since = Math.max(0, (row ? row.updates : 0) - HISTORY_PAGE);
  const page = await api.history(name, since, 1000);
  for (const update of page.updates) timeline.add(update);
  $("older").hidden = since === 0;
  startStream(name, page.next_since_seq);
  loadRuntime();
}

async function loadGraph({ keepView = false } = {}) {
  const start = performance.now();
  const payload = state.detail ? await detailPayload() : await api.graph(state.memory, state.version);
  if (payload.memory !== state.memory) return;
  const fetched = performance.now();
  state.now = payload.now;
  showCount(payload, await graph.render(payload, { keepView }));
  const slider = $("version");
  slider.max = String(payload.now);
  if (state.version === null) slider.value = String(payload.now);
  $("version-out").textContent = `v${slider.value}`;
  fillFilters();
  travelBanner(payload);
  metrics.graphLoads += 1;
  if (metrics.firstRender === null) {
    await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
    metrics.firstRender = performance.now() - start;
    metrics.fetch = fetched - start;
    metrics.sinceNavigation = performance.now();
    document.body.dataset.ready = "1";
  }
}

function showCount(payload, count) {
  const facts = payload.facts.predicate.length;
  const whole = state.detail ? ` drawn of ${state.detail.outline.entities} (click a floor or room to open it)` : "";
  $("graph-count").textContent = `${count} entities · ${facts} facts${whole} · version ${payload.version}${state.version === null ? "" : ` of ${payload.now}`}`;
  $("graph").dataset.entities = String(count);
}

// A large memory: its outline, and again each part that is open (they may have changed).
async function detailPayload() {
  const detail = state.detail;
  const [outline, ...parts] = await Promise.all([
    api.outline(state.memory, state.version),
    ...[...detail.parts.keys()].map((key) => api.part(state.memory, key, state.version).catch(() => null)),
  ]);
  const keys = [...detail.parts.keys()];
  detail.outline = outline;
  detail.parts = new Map(keys.map((key, i) => [key, parts[i]]).filter(([, part]) => part));
  return detail.compose();
}

// Opens a floor or a room of a large memory ("floor:F" or "room:R"): fetches it and draws it in
// place. Resolves with the milliseconds from asking to the second frame after it was drawn.
async function openPart(key) {
  const detail = state.detail;
  if (!detail || !key || detail.parts.has(key)) return 0;
  const start = performance.now();
  try {
    detail.opened(key, await api.part(state.memory, key, state.version));
    const payload = detail.compose();
    showCount(payload, await graph.render(payload));
    const [kind, ...rest] = key.split(":");
    const name = rest.join(":");
    graph.focus(kind === "floor" && detail.floors > 1 ? `__floor:${name}` : name);
    fillFilters();
  } catch (error) {
    status(explain(error));
  }
  await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  metrics.lastOpen = performance.now() - start;
  return metrics.lastOpen;
}

function fillFilters() {
  const room = $("room-filter");
  const type = $("type-filter");
  const keep = [room.value, type.value];
  clear(room).append(el("option", { value: "", text: "all rooms" }));
  const outline = state.detail && state.detail.outline;
  const rooms = outline ? outline.rooms.name.map((name, i) => [name, outline.rooms.label[i]]) : graph.rooms();
  for (const [name, label] of rooms.sort((a, b) => a[1].localeCompare(b[1]))) room.append(el("option", { value: name, text: label }));
  clear(type).append(el("option", { value: "", text: "all types" }));
  const types = new Set(graph.types.flatMap((t) => (graph.lineage[t] || [t]).filter((x) => x !== "object")));
  for (const t of [...types].sort()) type.append(el("option", { value: t, text: t }));
  [room.value, type.value] = keep;
}

function travelBanner(payload) {
  const banner = $("travel-banner");
  $("now").disabled = state.version === null;
  if (!payload.diff) {
    banner.hidden = true;
    return;
  }
  const { added, removed, new_entities: created } = payload.diff;
  const facts = [...removed.map((f) => `− ${f}`), ...added.map((f) => `+ ${f}`)];
  clear(banner).append(
    el("strong", { text: `Viewing version ${payload.version} of ${payload.now}. ` }),
    `Since then: ${added.length} facts added, ${removed.length} removed, ${created.length} new entities (marked red).`,
    el("ul", { class: "diff" }, facts.slice(0, 8).map((f) => el("li", { class: f.startsWith("+") ? "added" : "removed", text: f }))),
  );
  banner.hidden = false;
}

async function showEntity(name) {
  state.selected = name;
  try {
    const data = await api.entity(state.memory, name);
    $("details-hint").hidden = true;
    renderDetails($("details-body"), data);
  } catch (error) {
    status(explain(error));
  }
}

async function loadRuntime() {
  try {
    renderRuntime($("runtime"), await api.runtime(state.memory));
  } catch (error) {
    status(explain(error));
  }
}

async function revert(update) {
  try {
    const done = await api.revert(state.memory, update.id);
    status(`Reverted update #${update.seq} with update #${done.seq}.`, "info");
    return null;
  } catch (error) {
    return explain(error);
  }
}

function startStream(name, since) {
  const controller = new AbortController();
  state.stream = controller;
  const live = $("live");
  follow(
    name,
    since,
    (kind, data) => {
      if (kind === "update" && state.memory === name) received(data);
      if (kind === "error") status(data.message);
    },
    (s) => {
      live.textContent = s;
      live.className = `live ${s}`;
    },
    controller.signal,
  );
}

function received(update) {
  timeline.add(update);
  if (update.status !== "applied") return;
  clearTimeout(state.refresh);
  state.refresh = setTimeout(async () => {
    try {
      if (state.version === null) await loadGraph({ keepView: true });
      else $("version").max = String(update.version);
      if (state.selected && state.version === null) await showEntity(state.selected);
      await loadMemories();
      if (update.source === "execution" || update.source === "api") loadRuntime();
    } catch (error) {
      status(explain(error));
    }
  }, 250);
}

function wire() {
  $("api-key").value = apiKey();
  $("key-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    setApiKey($("api-key").value.trim());
    status("");
    await boot();
  });
  $("room-filter").addEventListener("change", async (e) => {
    const room = e.target.value;
    if (room && state.detail) await openPart(state.detail.keyForRoom(room));
    graph.setFilter("room", room);
  });
  $("type-filter").addEventListener("change", (e) => graph.setFilter("type", e.target.value));
  $("search").addEventListener("input", (e) => {
    const count = graph.setFilter("text", e.target.value);
    $("search-count").textContent = e.target.value.trim() ? `${count} found` : "";
  });
  $("source-filter").addEventListener("change", (e) => timeline.setFilter("source", e.target.value));
  $("status-filter").addEventListener("change", (e) => timeline.setFilter("status", e.target.value));
  $("version").addEventListener("input", (e) => ($("version-out").textContent = `v${e.target.value}`));
  $("version").addEventListener("change", (e) => travel(Number(e.target.value)));
  $("now").addEventListener("click", () => travel(null));
  $("older").addEventListener("click", older);
  for (const tab of document.querySelectorAll(".tab")) {
    tab.addEventListener("click", () => {
      for (const t of document.querySelectorAll(".tab")) t.classList.toggle("active", t === tab);
      for (const body of document.querySelectorAll(".tab-body")) body.hidden = body.id !== `tab-${tab.dataset.tab}`;
    });
  }
  $("plan-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const goal = $("plan-goal").value.trim();
    const box = $("plan-result");
    clear(box).append(el("p", { class: "muted", text: "planning…" }));
    try {
      renderPlan(box, await api.plan(state.memory, { request: $("plan-request").value.trim(), goal: goal || null }));
    } catch (error) {
      clear(box).append(el("p", { class: "error", text: explain(error) }));
    }
  });
  window.addEventListener("hashchange", route);
}

async function travel(version) {
  state.version = version === null || version >= state.now ? null : version;
  try {
    await loadGraph();
  } catch (error) {
    status(explain(error));
  }
}

async function older() {
  const oldest = timeline.oldest;
  const since = Math.max(0, oldest - 1 - HISTORY_PAGE);
  const page = await api.history(state.memory, since, Math.max(1, Math.min(HISTORY_PAGE, oldest - 1 - since)));
  for (const update of page.updates.reverse()) timeline.add(update, { older: true });
  $("older").hidden = since === 0;
}

async function route() {
  const wanted = decodeURIComponent((location.hash.match(/memory=([^&]+)/) || [])[1] || "");
  const names = state.memories.map((m) => m.name);
  const name = names.includes(wanted) ? wanted : names[0];
  if (!name) {
    status("No memories yet: create one with `l3mp init` or POST /v1/memories.", "info");
    return;
  }
  try {
    await open(name);
  } catch (error) {
    status(explain(error));
  }
}

async function boot() {
  try {
    await loadMemories();
    state.memory = null;
    await route();
  } catch (error) {
    status(explain(error));
  }
}

wire();
boot();
