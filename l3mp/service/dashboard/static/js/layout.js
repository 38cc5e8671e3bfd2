// A deterministic floor-plan layout: rooms as boxes packed in rows, each holding its furniture, each
// piece of furniture holding what is on or in it. Positions are computed here in one pass (linear in
// the entities), so 2,000 entities lay out in milliseconds; force layouts took seconds and moved
// things between visits, which makes a memory hard to read.

import { entityRows } from "./payload.js";

const LEAF_H = 30;
const FLAG_H = 12;
const GAP = 10;
const PAD = 10;
const LABEL = 20;
const ROOM_LABEL = 40; // room names are drawn large enough to read with the whole home in view

export const UNPLACED = "__unplaced";

export function kindOf(lineage, type) {
  const chain = lineage[type] || [type];
  return chain.length >= 2 ? chain[chain.length - 2] : chain[0];
}

function leafWidth(label) {
  return Math.min(180, Math.max(72, 6.4 * label.length + 20));
}

// Rows of boxes about `aspect` times wider than high; sets each box's offset (dx, dy).
function shelf(boxes, aspect) {
  const area = boxes.reduce((sum, b) => sum + (b.w + GAP) * (b.h + GAP), 0);
  const widest = boxes.reduce((max, b) => Math.max(max, b.w), 0);
  const width = Math.max(widest, Math.sqrt(area * aspect));
  let x = 0;
  let y = 0;
  let row = 0;
  let total = 0;
  for (const b of boxes) {
    if (x > 0 && x + b.w > width) {
      x = 0;
      y += row + GAP;
      row = 0;
    }
    b.dx = x;
    b.dy = y;
    x += b.w + GAP;
    row = Math.max(row, b.h);
    total = Math.max(total, x - GAP);
  }
  return { w: total, h: y + row };
}

// model: {entities: Map name -> {label, kind, flags}, children: Map name -> [names], roots: [names]}
export function layout(model, aspect) {
  const positions = new Map();
  const order = (a, b) => {
    const ka = model.children.has(a) ? 0 : 1;
    const kb = model.children.has(b) ? 0 : 1;
    return ka - kb || labelOf(model, a).localeCompare(labelOf(model, b));
  };
  const box = (name) => {
    const kids = model.children.get(name);
    if (!kids || !kids.length) {
      const entity = model.entities.get(name);
      const flags = entity && entity.flags.length ? FLAG_H : 0;
      return { name, w: leafWidth(labelOf(model, name)), h: LEAF_H + flags, kids: [] };
    }
    const boxes = [...kids].sort(order).map(box);
    const size = shelf(boxes, 1.4);
    const root = model.roots.includes(name);
    const label = root ? ROOM_LABEL : LABEL;
    const title = labelOf(model, name).length * (root ? 15 : 7.5) + 2 * PAD; // at least as wide as its name
    return { name, label, w: Math.max(size.w + 2 * PAD, title), h: size.h + 2 * PAD + label, kids: boxes };
  };
  // Containers are ordinary nodes sized to hold what is in them (Cytoscape's compound nodes recompute
  // their bounds on every change and took 9 s to build at 2,000 entities); depth orders them on screen.
  const place = (b, x, y, depth) => {
    if (!b.kids.length) {
      positions.set(b.name, { x: x + b.w / 2, y: y + b.h / 2, depth, w: null, h: null });
      return;
    }
    positions.set(b.name, { x: x + b.w / 2, y: y + b.label + (b.h - b.label) / 2, depth, w: b.w, h: b.h - b.label });
    for (const k of b.kids) place(k, x + PAD + k.dx, y + PAD + b.label + k.dy, depth + 1);
  };
  const roots = [...model.roots].sort(order).map(box);
  fill(roots, aspect);
  for (const r of roots) place(r, r.dx, r.dy, 0);
  return positions;
}

// Rooms in rows at the width (of a few tried) whose bounding box fills a view of this aspect best.
function fill(boxes, aspect) {
  let best = null;
  for (const factor of [0.6, 0.8, 1, 1.25, 1.5, 1.8, 2.2, 2.7, 3.3]) {
    const size = shelf(boxes, aspect * factor);
    const scale = Math.min(aspect / size.w, 1 / size.h);
    if (!best || scale > best.scale) best = { factor, scale };
  }
  shelf(boxes, aspect * best.factor);
}

function labelOf(model, name) {
  const entity = model.entities.get(name);
  return entity ? entity.label : "not in a room";
}

/**
 * The payload as the model the layout and the graph use.
 * @param {import("./payload.js").GraphPayload} payload
 */
export function buildModel(payload) {
  const entities = new Map();
  for (const entity of entityRows(payload.entities)) {
    entities.set(entity.name, { ...entity, kind: kindOf(payload.lineage, entity.type), flags: [] });
  }
  // must be somewhere, but the memory does not know where (perception lost track): not "nowhere"
  for (const name of payload.unknown_location) if (entities.has(name)) entities.get(name).flags.push("location unknown");
  const links = [];
  const { predicate: predicates, args: argsOf } = payload.facts;
  for (let i = 0; i < predicates.length; i++) {
    const predicate = predicates[i];
    const args = argsOf[i];
    if (args.length === 1 && entities.has(args[0])) entities.get(args[0]).flags.push(predicate.replaceAll("_", " "));
    if (args.length !== 2 || !entities.has(args[0]) || !entities.has(args[1])) continue;
    if (entities.get(args[0]).parent === args[1]) continue; // shown by nesting
    links.push({ predicate, source: args[0], target: args[1] });
  }
  const children = new Map();
  const roots = [];
  let unplaced = false;
  for (const entity of entities.values()) {
    let parent = entity.parent && entities.has(entity.parent) ? entity.parent : null;
    if (!parent && entity.kind !== "room" && entity.kind !== "floor") {
      parent = UNPLACED;
      unplaced = true;
    }
    entity.parent = parent;
    if (parent === null) roots.push(entity.name);
    else {
      if (!children.has(parent)) children.set(parent, []);
      children.get(parent).push(entity.name);
    }
  }
  if (unplaced) roots.push(UNPLACED);
  return { entities, children, roots, links };
}

// ``name`` and everything placed in it, at any depth.
export function subtree(model, name) {
  const found = new Set([name]);
  const stack = [name];
  while (stack.length) for (const child of model.children.get(stack.pop()) || []) found.add(child) && stack.push(child);
  return found;
}

// Where ``name`` sits, up to its room.
export function containers(model, name) {
  const chain = [];
  let current = model.entities.get(name);
  while (current && current.parent && chain.length < 10) {
    chain.push(current.parent);
    current = model.entities.get(current.parent);
  }
  return chain;
}
