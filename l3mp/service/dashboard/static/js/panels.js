// The side panels: the list of memories, an entity's details, plans and the robot runtime's tasks.

import { deltaList } from "./timeline.js";
import { ago, chip, clear, el, timeText } from "./dom.js";

export function renderMemories(tbody, memories, current, onPick) {
  clear(tbody);
  for (const m of memories) {
    const row = el(
      "tr",
      { class: m.name === current ? "current" : "", dataset: { memory: m.name }, tabindex: 0 },
      el("td", { class: "name", text: m.name }),
      el("td", { text: m.domain }),
      el("td", { class: "num", text: m.entities }),
      el("td", { class: "num", text: m.facts }),
      el("td", { class: "num", text: m.version }),
      el("td", { title: timeText(m.last_update), text: ago(m.last_update) }),
    );
    row.addEventListener("click", () => onPick(m.name));
    row.addEventListener("keydown", (event) => event.key === "Enter" && onPick(m.name));
    tbody.append(row);
  }
}

export function renderDetails(body, data) {
  const { entity, lineage, facts, history } = data;
  const attrs = Object.entries(entity.attrs);
  clear(body).append(
    el("h3", { class: "entity-label", text: entity.label }),
    el("p", { class: "entity-name" }, el("code", { text: entity.name }), " ", el("span", { class: "muted", text: lineage.join(" ⊂ ") })),
    attrs.length
      ? el("dl", { class: "attrs" }, attrs.flatMap(([k, v]) => [el("dt", { text: k }), el("dd", { text: String(v) })]))
      : null,
    el("h4", { text: `Facts (${facts.length})` }),
    el(
      "ul",
      { class: "facts" },
      facts.map((f) => el("li", {}, el("span", { class: "english", text: f.english }), el("code", { text: f.fact }))),
    ),
    el("h4", { text: `History (${history.length})` }),
    el(
      "ol",
      { class: "entity-history" },
      history.map((u) =>
        el(
          "li",
          { class: u.status },
          el("div", {}, chip(u.source, `source ${u.source}`), chip(u.status, `status ${u.status}`), ` v${u.version} · ${timeText(u.time)}`),
          u.input ? el("p", { class: "input", text: u.input.length > 200 ? `${u.input.slice(0, 197)}...` : u.input }) : null,
          deltaList(u.delta),
          u.issues.length ? el("ul", { class: "issues rejected" }, u.issues.map((i) => el("li", { class: "reason", text: i.message }))) : null,
        ),
      ),
    ),
  );
}

export function renderPlan(box, report) {
  const seconds = Object.entries(report.timings || {});
  clear(box).append(
    el("div", { class: "plan-head" }, chip(report.status, `status ${report.status === "solved" ? "applied" : "rejected"}`),
      report.tier ? el("span", { text: ` tier: ${report.tier}` }) : null, el("span", { class: "muted", text: ` at v${report.version}` })),
    report.goal ? el("p", {}, "goal ", el("code", { text: report.goal })) : null,
    report.plan.length
      ? el("ol", { class: "plan-steps" }, report.plan.map((step, i) =>
          el("li", {}, el("code", { text: step }), el("span", { class: "english", text: report.explanation[i] || "" }))))
      : null,
    report.issues.length ? el("ul", { class: "issues rejected" }, report.issues.map((i) => el("li", { class: "reason", text: i }))) : null,
    seconds.length
      ? el("table", { class: "timings" }, seconds.map(([k, v]) => el("tr", {}, el("td", { text: k }), el("td", { class: "num", text: `${Number(v).toFixed(3)} s` }))))
      : null,
  );
}

export function renderRuntime(list, tasks) {
  clear(list);
  if (!tasks.length) {
    list.append(el("li", { class: "muted", text: "No runtime tasks in this memory yet (l3mp daemon writes them)." }));
    return;
  }
  for (const t of tasks) {
    list.append(
      el(
        "li",
        { class: `task ${t.status}` },
        el("div", {}, chip(t.status, `status ${t.status === "succeeded" ? "applied" : "rejected"}`), " ",
          el("span", { class: "request", text: t.request || t.goal || t.id }),
          el("span", { class: "muted", text: ` · ${t.actions ?? 0} actions · ${t.replans} replans · ${timeText(t.time)}` })),
        t.reason ? el("p", { class: "reason", text: t.reason }) : null,
        (t.causes || []).length
          ? el("ul", { class: "causes" }, t.causes.map((c) =>
              el("li", {}, el("strong", { text: c.cause.replaceAll("_", " ") }), c.action ? ` at ${c.action}: ` : ": ", (c.details || []).join("; "))))
          : null,
      ),
    );
  }
}
