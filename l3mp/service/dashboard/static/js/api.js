// The service's REST routes and its event stream, with the API key the person typed in (kept for this
// browser tab only). Errors come back as {error: {code, message, issues}} and are thrown as ApiError.

const KEY = "l3mp-api-key";

export class ApiError extends Error {
  constructor(status, body) {
    const error = (body && body.error) || {};
    super(error.message || `HTTP ${status}`);
    this.status = status;
    this.code = error.code || "http_error";
    this.issues = error.issues || [];
    this.update = error.update || null;
  }
}

export function apiKey() {
  return sessionStorage.getItem(KEY) || "";
}

export function setApiKey(key) {
  if (key) sessionStorage.setItem(KEY, key);
  else sessionStorage.removeItem(KEY);
}

function headers(extra = {}) {
  const key = apiKey();
  return key ? { "X-API-Key": key, ...extra } : extra;
}

export async function request(method, path, body) {
  const init = { method, headers: headers(body === undefined ? {} : { "Content-Type": "application/json" }) };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await fetch(path, init);
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

export const get = (path) => request("GET", path);
export const post = (path, body) => request("POST", path, body ?? {});

// The service's root, from where this file is served (<root>dashboard/static/js/api.js): the dashboard
// then also works where a proxy serves the service under a prefix (https://host/robots/home/), whatever
// URL the page itself was opened at.
const ROOT = new URL("../../../", import.meta.url).pathname;
const memoryPath = (memory) => `${ROOT}dashboard/api/memories/${encodeURIComponent(memory)}`;
const v1 = (memory) => `${ROOT}v1/memories/${encodeURIComponent(memory)}`;

export const api = {
  memories: () => get(`${ROOT}dashboard/api/memories`),
  /** @type {(memory: string, version: number|null) => Promise<import("./payload.js").GraphPayload>} */
  graph: (memory, version) => get(`${memoryPath(memory)}/graph${version === null ? "" : `?version=${version}`}`),
  outline: (memory, version) => get(`${memoryPath(memory)}/outline${version === null ? "" : `?version=${version}`}`),
  /** @type {(memory: string, key: string, version: number|null) => Promise<import("./payload.js").GraphPayload>} */
  part: (memory, key, version) => {
    const [kind, ...rest] = key.split(":");
    const query = new URLSearchParams({ [kind]: rest.join(":") });
    if (version !== null) query.set("version", String(version));
    return get(`${memoryPath(memory)}/graph?${query}`);
  },
  entity: (memory, name) => get(`${memoryPath(memory)}/entities/${encodeURIComponent(name)}`),
  runtime: (memory) => get(`${memoryPath(memory)}/runtime`),
  history: (memory, sinceSeq, limit) => get(`${v1(memory)}/updates?since_seq=${sinceSeq}&limit=${limit}`),
  revert: (memory, id) => post(`${v1(memory)}/updates/${encodeURIComponent(id)}/revert`, {}),
  plan: (memory, body) => post(`${v1(memory)}/plans`, body),
};

// Server-sent events read with fetch (EventSource cannot send the X-API-Key header). Reconnects after
// `retry` ms, resuming after the last event id, until `signal` aborts.
export async function follow(memory, sinceSeq, onEvent, onState, signal) {
  let last = sinceSeq;
  let retry = 2000;
  while (!signal.aborted) {
    try {
      const url = `${memoryPath(memory)}/events?since_seq=${last}`;
      const response = await fetch(url, { headers: headers({ Accept: "text/event-stream" }), signal });
      if (!response.ok) throw new ApiError(response.status, null);
      onState("live");
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const message = parse(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
          if (message.retry) retry = message.retry;
          if (message.id !== null) last = message.id;
          if (message.event && message.data !== null) onEvent(message.event, message.data);
        }
      }
    } catch (error) {
      if (signal.aborted) return;
    }
    onState("reconnecting");
    await new Promise((resolve) => setTimeout(resolve, retry));
  }
}

function parse(block) {
  const message = { id: null, event: null, data: null, retry: null };
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "id" && /^\d+$/.test(value)) message.id = Number(value);
    else if (field === "event") message.event = value;
    else if (field === "retry" && /^\d+$/.test(value)) message.retry = Number(value);
    else if (field === "data") message.data = JSON.parse(value);
  }
  return message;
}
