// The memory drawn with Cytoscape.js (vendor/, see static/README.md): entities as nodes nested where
// they are (room > furniture > item), a selected entity's other relations as labelled edges, filters
// by room, type and text, and the entities that changed since a past version marked in red.

import { UNPLACED, buildModel, containers, layout, subtree } from "./layout.js";

const COLOURS = {
  room: "#f6f1e7",
  furniture: "#dbe6f3",
  receptacle: "#dbe6f3",
  item: "#f4c27a",
  appliance: "#a8d8b0",
  agent: "#ef9f96",
  liquid: "#a9cfe8",
  floor: "#ece4d2",
};
const CHUNK = 1500; // elements added per frame: the page stays responsive while a large part draws

const nextFrame = () => new Promise((resolve) => requestAnimationFrame(resolve));

const STYLE = [
  {
    selector: "node",
    style: {
      shape: "round-rectangle",
      "background-color": "data(colour)",
      "border-width": 1,
      "border-color": "#8a8f98",
      label: "data(text)",
      "text-wrap": "wrap",
      "text-max-width": "data(tw)",
      "text-valign": "center",
      "font-size": 11,
      "font-family": "system-ui, sans-serif",
      color: "#1d232b",
      width: "data(w)",
      height: "data(h)",
      "min-zoomed-font-size": 7,
      "z-index-compare": "manual",
      "z-index": "data(z)",
    },
  },
  {
    selector: "node.container",
    style: {
      "z-index": "data(z)",
      "text-valign": "top",
      "font-weight": "bold",
      "font-size": 12,
      "text-max-width": "600px",
      padding: "10px",
      "background-opacity": 0.9,
      "text-margin-y": -2,
      "border-color": "#b6ab93",
    },
  },
  {
    selector: "node.container[kind = 'room']",
    style: { "font-size": 26, "text-margin-y": -4, "text-max-width": "2000px", "min-zoomed-font-size": 5, "border-width": 2, "background-color": COLOURS.room },
  },
  { selector: "node.container[kind != 'room']", style: { "background-color": "#e8eef6", "border-color": "#9fb3cc" } },
  { selector: `node[id = '${UNPLACED}']`, style: { "background-color": "#f3f3f3", "border-style": "dashed" } },
  { selector: "node[type = 'robot']", style: { "background-color": "#b58ad0", "border-width": 2, "border-color": "#5b2d7a" } },
  { selector: "node[?flagged]", style: { "border-width": 2, "border-color": "#c98a00" } },
  { selector: "node.collapsed", style: { "border-style": "dashed", "border-width": 2, "border-color": "#8c7a55", "font-weight": "bold" } },
  { selector: "node.container[kind = 'floor']", style: { "font-size": 30, "text-max-width": "3000px", "border-width": 3, "background-color": COLOURS.floor } },
  {
    selector: "edge",
    style: {
      width: 1.5,
      "line-color": "#5b6b80",
      "target-arrow-color": "#5b6b80",
      "target-arrow-shape": "triangle",
      "curve-style": "bezier",
      label: "data(predicate)",
      "font-size": 10,
      "text-background-color": "#ffffff",
      "text-background-opacity": 0.85,
      "text-background-padding": "2px",
    },
  },
  { selector: ".faded", style: { opacity: 0.18 } },
  { selector: ".match", style: { "border-width": 3, "border-color": "#d62728" } },
  { selector: ".changed", style: { "border-width": 3, "border-color": "#d62728", "border-style": "double" } },
  { selector: "node:selected", style: { "border-width": 4, "border-color": "#1f6feb", "overlay-opacity": 0 } },
  { selector: ".hidden", style: { display: "none" } },
];

export class Graph {
  constructor(container, onSelect, onOpen = () => {}) {
    this.container = container;
    this.onSelect = onSelect;
    this.onOpen = onOpen; // a collapsed floor or room was clicked
    this.cy = null;
    this.model = null;
    this.renders = 0;
    this.filters = { room: "", type: "", text: "" };
  }

  // Draws the payload (with `collapsed`, the names drawn as closed boxes) a chunk of elements per
  // frame, containers first; resolves with the number of entities once all is drawn. A newer render
  // abandons an older one.
  /** @param {import("./payload.js").GraphPayload & {collapsed?: Set<string>}} payload */
  async render(payload, { keepView = false } = {}) {
    const token = ++this.renders;
    const collapsed = payload.collapsed || new Set();
    const model = buildModel(payload);
    const aspect = Math.max(1, this.container.clientWidth / Math.max(1, this.container.clientHeight));
    const positions = layout(model, aspect);
    let elements = [];
    const box = (name) => positions.get(name) || { x: 0, y: 0, depth: 0, w: null, h: null };
    if (model.children.has(UNPLACED)) {
      const b = box(UNPLACED);
      elements.push({
        group: "nodes",
        classes: "container",
        data: { id: UNPLACED, text: "not in a room", kind: "other", colour: "#f3f3f3", w: b.w, h: b.h, tw: b.w, z: 0 },
        position: { x: b.x, y: b.y },
      });
    }
    for (const entity of model.entities.values()) {
      const b = box(entity.name);
      const container = b.w !== null;
      const width = Math.min(180, Math.max(72, 6.4 * entity.label.length + 20)) - 8;
      const text = entity.flags.length ? `${entity.label}\n${entity.flags.join(" · ")}` : entity.label;
      const real = entity.kind !== "floor"; // floors and "not in a room" are the outline's, not entities
      const classes = [real ? "entity" : "", container ? "container" : "", collapsed.has(entity.name) ? "collapsed" : ""];
      elements.push({
        group: "nodes",
        classes: classes.filter(Boolean).join(" "),
        data: {
          id: entity.name,
          container: entity.parent || null,
          text: container && entity.flags.length ? `${entity.label} · ${entity.flags.join(" · ")}` : text,
          type: entity.type,
          kind: entity.kind,
          flagged: entity.flags.length > 0,
          colour: COLOURS[entity.kind] || "#d9d9d9",
          w: container ? b.w : width,
          h: container ? b.h : entity.flags.length ? 36 : 24,
          tw: container ? b.w : width - 8,
          z: container ? b.depth : 100,
        },
        position: { x: b.x, y: b.y },
      });
    }
    this.model = model;
    this.types = [...new Set([...model.entities.values()].filter((e) => e.kind !== "floor").map((e) => e.type))].sort();
    this.lineage = payload.lineage;
    const view = keepView && this.cy ? { zoom: this.cy.zoom(), pan: { ...this.cy.pan() } } : null;
    if (this.cy) this.cy.destroy();
    const cy = window.cytoscape({
      container: this.container,
      elements: [],
      style: STYLE,
      minZoom: 0.02,
      maxZoom: 4,
      boxSelectionEnabled: false,
      autoungrabify: true,
      hideEdgesOnViewport: true,
    });
    this.cy = cy;
    cy.on("tap", "node.collapsed", (event) => this.onOpen(event.target.id()));
    cy.on("tap", "node.entity", (event) => {
      if (!event.target.hasClass("collapsed")) this.select(event.target.id(), false);
    });
    const boxes = elements.filter((e) => e.classes.includes("container"));
    elements = [...boxes, ...elements.filter((e) => !e.classes.includes("container"))];
    for (let i = 0; i < elements.length; i += CHUNK) {
      if (i > 0) await nextFrame();
      if (token !== this.renders) return model.entities.size;
      cy.batch(() => cy.add(elements.slice(i, i + CHUNK)));
      if (i === 0) {
        if (view) cy.viewport(view);
        else cy.fit(undefined, 20);
      }
    }
    this.markChanged(payload.diff);
    this.applyFilters(!view);
    return model.entities.size;
  }

  rooms() {
    if (!this.model) return [];
    return [...this.model.entities.values()].filter((e) => e.kind === "room").map((e) => [e.name, e.label]);
  }

  // Centres the view on a drawn node (a part just opened).
  focus(name) {
    const node = this.cy && this.cy.getElementById(name);
    if (!node || !node.nonempty()) return;
    this.cy.fit(node, 40);
    if (this.cy.zoom() > 1.2) {
      this.cy.zoom(1.2);
      this.cy.center(node);
    }
  }

  markChanged(diff) {
    if (!diff) return;
    const names = new Set();
    for (const fact of [...diff.added, ...diff.removed]) {
      for (const arg of fact.slice(1, -1).split(" ").slice(1)) names.add(arg);
    }
    for (const name of names) this.cy.getElementById(name).addClass("changed");
  }

  select(name, center = true) {
    if (!this.cy) return;
    const node = this.cy.getElementById(name);
    if (!node.nonempty()) return;
    this.cy.elements().unselect();
    this.cy.edges().remove();
    const links = this.model.links.filter((l) => l.source === name || l.target === name);
    this.cy.add(links.map((l, i) => ({ group: "edges", data: { id: `link-${i}`, ...l } })));
    node.select();
    if (center) this.cy.animate({ center: { eles: node }, zoom: Math.max(this.cy.zoom(), 1) }, { duration: 250 });
    this.onSelect(name);
  }

  setFilter(key, value) {
    this.filters[key] = value;
    return this.applyFilters();
  }

  // Room: only that room's subtree is drawn. Type and text: the rest fades. Returns the match count.
  applyFilters(fit = true) {
    if (!this.cy) return 0;
    const { room, type, text } = this.filters;
    const cy = this.cy;
    cy.batch(() => {
      cy.nodes(".hidden, .faded, .match").removeClass("hidden faded match");
      if (room) {
        const keep = subtree(this.model, room);
        cy.nodes().filter((n) => !keep.has(n.id())).addClass("hidden");
      }
    });
    const needle = text.trim().toLowerCase();
    let matches = cy.collection();
    if (type || needle) {
      matches = cy.nodes(".entity").filter((node) => {
        const entity = this.model.entities.get(node.id());
        const typeOk = !type || (this.lineage[entity.type] || [entity.type]).includes(type);
        const textOk = !needle || entity.name.toLowerCase().includes(needle) || entity.label.toLowerCase().includes(needle);
        return typeOk && textOk && !node.hasClass("hidden");
      });
      const keep = new Set(matches.map((n) => n.id()));
      matches.forEach((n) => containers(this.model, n.id()).forEach((c) => keep.add(c)));
      cy.batch(() => {
        cy.nodes().filter((n) => !keep.has(n.id())).addClass("faded");
        if (needle) matches.addClass("match");
      });
      if (fit && matches.nonempty() && needle) {
        cy.fit(matches, 60);
        if (cy.zoom() > 1.6) {
          cy.zoom(1.6);
          cy.center(matches);
        }
      }
    } else if (fit && room) {
      cy.fit(cy.nodes(":visible"), 30);
    }
    if (fit && !type && !needle && !room) cy.fit(undefined, 20);
    return matches.length;
  }
}
