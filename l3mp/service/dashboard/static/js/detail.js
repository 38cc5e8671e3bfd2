// Level of detail for large memories: the outline (GET .../outline) draws floors and rooms collapsed,
// with what is in them counted; opening a floor or a room fetches that part (GET .../graph?floor= or
// ?room=) and draws it in place. What is drawn is composed here as one graph payload, so the layout and
// the drawing are those of a small memory.

export const FLOOR = "__floor:";
export const UNPLACED_ROOM = "__unplaced"; // the service's name for what is in no room
const OPEN_ROOMS = 12; // rooms open at once in a one-floor memory; the oldest closes first

export class Detail {
  constructor() {
    /** @type {object|null} the outline as the service sent it */
    this.outline = null;
    /** @type {Map<string, import("./payload.js").GraphPayload>} "floor:F" or "room:R" -> its part */
    this.parts = new Map();
  }

  get floors() {
    return this.outline ? this.outline.floors.length : 0;
  }

  // The part a drawn node opens: a collapsed floor opens the floor, a collapsed room the room.
  keyOf(id) {
    if (id.startsWith(FLOOR)) return `floor:${id.slice(FLOOR.length)}`;
    return `room:${id}`;
  }

  // Where to open a room: its floor in a building, the room itself in a one-floor memory.
  keyForRoom(room) {
    if (this.floors <= 1 || room === UNPLACED_ROOM) return `room:${room}`;
    const i = this.outline.rooms.name.indexOf(room);
    return i < 0 ? `room:${room}` : `floor:${this.outline.rooms.floor[i]}`;
  }

  // Keeps what is open within bounds: one floor at a time, a dozen rooms.
  opened(key, part) {
    if (key.startsWith("floor:")) for (const k of [...this.parts.keys()]) if (k.startsWith("floor:")) this.parts.delete(k);
    this.parts.delete(key);
    this.parts.set(key, part);
    const rooms = [...this.parts.keys()].filter((k) => k.startsWith("room:"));
    for (const k of rooms.slice(0, Math.max(0, rooms.length - OPEN_ROOMS))) this.parts.delete(k);
  }

  // The drawn graph as one payload: collapsed floors and rooms as labelled boxes, open parts whole.
  compose() {
    const o = this.outline;
    const entities = { name: [], type: [], label: [], parent: [] };
    const facts = { predicate: [], args: [] };
    const lineage = { ...o.lineage, floor: ["floor"] };
    const unknown = [];
    const collapsed = new Set();
    const add = (name, type, label, parent) => {
      entities.name.push(name);
      entities.type.push(type);
      entities.label.push(label);
      entities.parent.push(parent);
    };
    const take = (part, parentOfRoom) => {
      const rooms = new Set(o.rooms.name);
      part.entities.name.forEach((name, i) => {
        const parent = part.entities.parent[i] ?? (rooms.has(name) ? parentOfRoom : null);
        add(name, part.entities.type[i], part.entities.label[i], parent);
      });
      facts.predicate.push(...part.facts.predicate);
      facts.args.push(...part.facts.args);
      Object.assign(lineage, part.lineage);
      unknown.push(...part.unknown_location);
    };
    const multi = this.floors > 1;
    if (multi) {
      for (const floor of o.floors) {
        const id = `${FLOOR}${floor.name}`;
        const part = this.parts.get(`floor:${floor.name}`);
        add(id, "floor", `floor ${floor.name} · ${floor.rooms} rooms · ${floor.entities} entities`, null);
        if (part) take(part, id);
        else collapsed.add(id);
      }
    }
    o.rooms.name.forEach((room, i) => {
      if (multi) return; // a building's rooms are drawn with their floor
      const part = this.parts.get(`room:${room}`);
      if (part) take(part, null);
      else {
        add(room, o.rooms.type[i], `${o.rooms.label[i]} · ${o.rooms.entities[i]}`, null);
        collapsed.add(room);
      }
    });
    if (o.unplaced) {
      const part = this.parts.get(`room:${UNPLACED_ROOM}`);
      if (part) take(part, null);
      else {
        add(UNPLACED_ROOM, "floor", `not in a room · ${o.unplaced}`, null);
        collapsed.add(UNPLACED_ROOM);
      }
    }
    return {
      memory: o.memory,
      domain: o.domain,
      version: o.version,
      now: o.now,
      lineage,
      constants: [],
      entities,
      facts,
      unknown_location: unknown,
      diff: o.diff,
      collapsed,
    };
  }
}
