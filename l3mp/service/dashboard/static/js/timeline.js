// The history as a timeline, newest first: source, input, delta, status, issues, version and time of
// every update; rejections stand out with their reasons; filters by source and status; revert.

import { chip, clear, el, timeText } from "./dom.js";

export class Timeline {
  constructor(list, onRevert) {
    this.list = list;
    this.onRevert = onRevert;
    this.seen = new Set();
    this.filters = { source: "", status: "" };
  }

  reset() {
    this.seen.clear();
    clear(this.list);
  }

  get oldest() {
    const last = this.list.lastElementChild;
    return last ? Number(last.dataset.seq) : 0;
  }

  add(update, { older = false } = {}) {
    if (this.seen.has(update.id)) return;
    this.seen.add(update.id);
    const card = this.card(update);
    if (older) this.list.append(card);
    else this.list.prepend(card);
    this.filter(card);
  }

  card(update) {
    const rejected = update.status === "rejected";
    const card = el("li", {
      class: `update ${update.status} source-${update.source}`,
      dataset: { seq: update.seq, id: update.id, source: update.source, status: update.status },
    });
    card.append(
      el(
        "div",
        { class: "update-head" },
        el("span", { class: "seq", text: `#${update.seq}` }),
        chip(update.source, `source ${update.source}`),
        chip(update.status, `status ${update.status}`),
        el("span", { class: "version", text: `v${update.version}` }),
        el("time", { datetime: update.time, text: timeText(update.time) }),
      ),
    );
    if (update.input) card.append(el("p", { class: "input", text: inputText(update) }));
    const delta = deltaList(update.delta);
    if (delta) card.append(delta);
    if (update.issues.length) {
      card.append(
        el(
          "ul",
          { class: rejected ? "issues rejected" : "issues" },
          update.issues.map((i) =>
            el("li", {}, el("span", { class: "issue-code", text: i.code }), " ", el("span", { class: "reason", text: i.message })),
          ),
        ),
      );
    }
    if (update.status === "applied" && hasChanges(update.delta)) {
      const error = el("p", { class: "error", hidden: true });
      const button = el("button", { type: "button", class: "revert", text: "Revert" });
      button.addEventListener("click", async () => {
        button.disabled = true;
        error.hidden = true;
        const message = await this.onRevert(update);
        if (message) {
          error.textContent = message;
          error.hidden = false;
        }
        button.disabled = false;
      });
      card.append(el("div", { class: "actions" }, button, error));
    }
    return card;
  }

  setFilter(key, value) {
    this.filters[key] = value;
    for (const card of this.list.children) this.filter(card);
  }

  filter(card) {
    const { source, status } = this.filters;
    card.hidden = Boolean((source && card.dataset.source !== source) || (status && card.dataset.status !== status));
  }
}

function hasChanges(delta) {
  return delta.add.length + delta.remove.length + delta.new_entities.length > 0;
}

function inputText(update) {
  const text = update.input;
  if (update.source === "sensor" && text.startsWith("{")) return text.length > 160 ? `observation ${text.slice(0, 157)}...` : `observation ${text}`;
  return text.length > 600 ? `${text.slice(0, 597)}...` : text;
}

const SHOWN = 12; // facts per side before "and N more"

export function deltaList(delta) {
  if (!hasChanges(delta)) return null;
  const list = el("ul", { class: "delta" });
  const rows = [
    ...delta.remove.map((f) => ["removed", `− ${f}`]),
    ...delta.add.map((f) => ["added", `+ ${f}`]),
    ...delta.new_entities.map((e) => ["added", `+ ${e.name} (${e.type}) “${e.label}”`]),
  ];
  for (const [kind, text] of rows.slice(0, SHOWN)) list.append(el("li", { class: kind, text }));
  if (rows.length > SHOWN) list.append(el("li", { class: "more", text: `and ${rows.length - SHOWN} more` }));
  return list;
}
