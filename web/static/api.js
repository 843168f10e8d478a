// The token, the API's JSON requests and the live stream (Server-Sent Events read with fetch,
// since EventSource cannot send the Authorization header).
//
// The token is read once from the URL fragment (#token=…) and kept in this module only.

const token = (() => {
  const fragment = new URLSearchParams(location.hash.replace(/^#/, ""));
  const value = fragment.get("token");
  return value ? value.trim() : null;
})();

export function hasToken() {
  return Boolean(token);
}

// The fragment to append to links to the other pages, so that they get the token too.
export function tokenFragment() {
  return token ? "#token=" + encodeURIComponent(token) : "";
}

// An answer the API gave with a status other than 2xx, or no answer at all (status 0).
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
  get rejected() {
    return this.status === 401;
  }
  get unreachable() {
    return this.status === 0;
  }
}

// Milliseconds to add to Date.now() to get the server's clock (from the Date header; 0 when absent).
export let serverClockOffset = 0;

function noteServerDate(response) {
  const date = Date.parse(response.headers.get("Date") || "");
  if (!Number.isNaN(date)) {
    const offset = date - Date.now();
    serverClockOffset = Math.abs(offset) > 2000 ? offset : 0;
  }
}

async function errorFrom(response) {
  let message = response.statusText || "HTTP " + response.status;
  try {
    const body = await response.json();
    if (body && typeof body.error === "string") message = body.error;
  } catch (_) {
    // not JSON: keep the status text
  }
  return new ApiError(response.status, message);
}

function url(path, params) {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params || {})) {
    if (value !== undefined && value !== null && value !== "") query.set(key, String(value));
  }
  const text = query.toString();
  return "/api/v1/" + path + (text ? "?" + text : "");
}

// The front answers at most 8 requests of one token at once (429 beyond): a page with many
// tiles queues its requests and sends a few at a time.
const MAX_RUNNING = 4;
let running = 0;
const waiting = [];

async function slot() {
  if (running < MAX_RUNNING) {
    running++;
    return;
  }
  await new Promise((resolve) => waiting.push(resolve));
}

function release() {
  const next = waiting.shift();
  if (next) next();
  else running--;
}

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// GET /api/v1/PATH?PARAMS as JSON; throws ApiError. A 429 is asked again after Retry-After.
export async function get(path, params) {
  if (!token) throw new ApiError(401, "no token");
  for (let attempt = 0; ; attempt++) {
    let response;
    await slot();
    try {
      response = await fetch(url(path, params), {
        headers: { Authorization: "Bearer " + token, Accept: "application/json" },
        cache: "no-store",
      });
    } catch (error) {
      throw new ApiError(0, "server unreachable");
    } finally {
      release();
    }
    if (response.status === 429 && attempt < 5) {
      await pause(1000 * (Number(response.headers.get("Retry-After")) || 1));
      continue;
    }
    if (!response.ok) throw await errorFrom(response);
    noteServerDate(response);
    return response.json();
  }
}

// POST /api/v1/PATH with BODY as JSON; the answer's JSON. Throws ApiError.
export async function post(path, body) {
  if (!token) throw new ApiError(401, "no token");
  let response;
  await slot();
  try {
    response = await fetch(url(path), {
      method: "POST",
      headers: { Authorization: "Bearer " + token, Accept: "application/json", "Content-Type": "application/json" },
      body: JSON.stringify(body),
      cache: "no-store",
    });
  } catch (error) {
    throw new ApiError(0, "server unreachable");
  } finally {
    release();
  }
  if (!response.ok) throw await errorFrom(response);
  noteServerDate(response);
  return response.json();
}

// Every sample of a query, following `next` for at most MAX_PAGES pages.
export async function allSamples(params, maxPages = 50) {
  const samples = [];
  let cursor = null;
  for (let page = 0; page < maxPages; page++) {
    const answer = await get("samples", { ...params, cursor });
    samples.push(...(answer.samples || []));
    cursor = answer.next;
    if (!cursor) break;
  }
  return samples;
}

// Parses a text/event-stream body: calls onEvent(name, data) for each event.
async function readEvents(body, onEvent, signal) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let name = "";
  let data = [];
  const cancel = () => reader.cancel().catch(() => {});
  signal.addEventListener("abort", cancel);
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.search(/\r\n|\r|\n/)) >= 0) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + (buffer.startsWith("\r\n", end) ? 2 : 1));
        if (line === "") {
          if (data.length) onEvent(name || "message", data.join("\n"));
          name = "";
          data = [];
        } else if (!line.startsWith(":")) {
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          let value = colon < 0 ? "" : line.slice(colon + 1);
          if (value.startsWith(" ")) value = value.slice(1);
          if (field === "event") name = value;
          else if (field === "data") data.push(value);
        }
      }
    }
  } finally {
    signal.removeEventListener("abort", cancel);
  }
}

// Follows /api/v1/live until the token is rejected or stop() is called, reconnecting with
// backoff (1 s doubling to 30 s) when the connection drops or the server is unreachable.
//   handlers.sample(S), handlers.state(state), handlers.workout(W or {id, deleted}), handlers.gap(missed)
//   handlers.status(kind, message): kind is "live", "reconnecting", "unreachable", "error" (an HTTP error), "rejected" (401,
//   or the stream's error event: revoked or expired) or "forbidden" (403); the last two are final
export function follow(handlers, params = {}) {
  const controller = new AbortController();
  let stopped = false;
  let delay = 1000;
  let timer = null;

  const status = (kind, message) => handlers.status && handlers.status(kind, message);

  async function connect() {
    if (stopped) return;
    let response;
    try {
      response = await fetch(url("live", params), {
        headers: { Authorization: "Bearer " + token, Accept: "text/event-stream" },
        cache: "no-store",
        signal: controller.signal,
      });
    } catch (error) {
      if (stopped) return;
      return retry("unreachable", "");
    }
    if (!response.ok) {
      const error = await errorFrom(response);
      if (error.status === 401 || error.status === 403) {
        stopped = true;
        return status(error.status === 401 ? "rejected" : "forbidden", error.message);
      }
      return retry("error", error.message);
    }
    noteServerDate(response);
    status("live", "");
    let ended = null;
    try {
      await readEvents(response.body, (name, data) => {
        let value;
        try {
          value = JSON.parse(data);
        } catch (_) {
          return;
        }
        delay = 1000;
        if (name === "sample") handlers.sample && handlers.sample(value);
        else if (name === "state") handlers.state && handlers.state(value);
        else if (name === "workout") handlers.workout && handlers.workout(value);
        else if (name === "event") handlers.event && handlers.event(value);
        else if (name === "gap") handlers.gap && handlers.gap(value.missed);
        else if (name === "error") {
          ended = value.error || "token rejected";
          stopped = true;
          controller.abort();
        }
      }, controller.signal);
    } catch (error) {
      // the connection dropped: reconnect below
    }
    if (ended !== null) return status("rejected", ended);
    if (stopped) return;
    retry("reconnecting", "");
  }

  function retry(kind, reason) {
    if (stopped) return;
    const wait = delay;
    delay = Math.min(delay * 2, 30000);
    status(kind, (reason ? reason + "; " : "") + "retrying in " + Math.round(wait / 1000) + " s");
    timer = setTimeout(connect, wait);
  }

  connect();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
      controller.abort();
    },
  };
}
