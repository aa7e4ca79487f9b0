// The HTTP API client: one function per endpoint of DESIGN §9 (second and
// third editions included), every request carrying `Authorization: Bearer <token>`,
// every error an ApiError.

/** A refused or failed request: `status` (0 for a network failure), `code`, `message`. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
  }
}

/**
 * Create the client. `base` is the origin ("" for same-origin), `token` the
 * access token (`setToken` replaces it: a reader pasted a new one), `fetch`
 * the fetch implementation (injected for tests).
 */
export function createApi({ base = "", token: initialToken, fetch: fetchImpl = globalThis.fetch }) {
  let token = initialToken ?? "";

  async function call(method, path, body) {
    const headers = { Accept: "application/json", Authorization: `Bearer ${token}` };
    const init = { method, headers };
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    let response;
    try {
      response = await fetchImpl(`${base}${path}`, init);
    } catch (err) {
      throw new ApiError(0, "network", err?.message ?? "network error");
    }
    const payload = await readJson(response);
    if (!response.ok) {
      const error = payload?.error;
      throw new ApiError(
        response.status,
        typeof error?.code === "string" ? error.code : "http_error",
        typeof error?.message === "string" ? error.message : `HTTP ${response.status}`,
      );
    }
    return payload;
  }

  const session = (id) => `/api/sessions/${encodeURIComponent(id)}`;

  return Object.freeze({
    /** The access token requests carry ("" when there is none). */
    token: () => token,
    setToken: (next) => {
      token = String(next ?? "");
    },
    health: () => call("GET", "/api/health"),
    /** `q` filters by title and first message (hosts without titles ignore it). */
    listSessions: async ({ q } = {}) => {
      const search = typeof q === "string" && q.trim() !== "" ? `?q=${encodeURIComponent(q.trim())}` : "";
      return (await call("GET", `/api/sessions${search}`))?.sessions ?? [];
    },
    createSession: async () => (await call("POST", "/api/sessions", {})).session,
    getSession: (id) => call("GET", session(id)),
    /** Rename: resolves to the Session's summary. */
    renameSession: async (id, title) => {
      const payload = await call("PATCH", session(id), { title });
      return payload?.session ?? payload;
    },
    /** Delete (the host keeps the log in its trash); resolves to null. */
    deleteSession: async (id) => {
      await call("DELETE", session(id));
      return null;
    },
    /** Bring a deleted Session back from the trash: resolves to its summary. */
    restoreSession: async (id) => (await call("POST", `${session(id)}/restore`, {})).session,
    /** Stop the running turn: `{cancelled}` says whether one was running. */
    cancel: (id) => call("POST", `${session(id)}/cancel`, {}),
    resume: (id) => call("POST", `${session(id)}/resume`, {}),
    fork: async (id, atSeq) =>
      (await call("POST", `${session(id)}/fork`, atSeq === undefined ? {} : { atSeq })).session,
    /**
     * Run a plugin's action on a Session (a reminder's delete, pause, resume,
     * snooze): resolves to its `result` once the change is durable.
     */
    act: async (id, plugin, action, args = {}) =>
      (await call("POST", `${session(id)}/actions`, { plugin, action, args }))?.result ?? null,
    /**
     * Mark the alerts of Session `id` up to `throughSeq` (inclusive) read:
     * resolves to `{unread}`, its count afterwards. Marks only move forward.
     */
    markRead: (id, throughSeq) => call("POST", `${session(id)}/read`, { throughSeq }),
    /** Queue a message (202); `timeZone` is the reader's IANA zone, when known. */
    sendMessage: (id, text, { timeZone } = {}) =>
      call("POST", `${session(id)}/messages`, typeof timeZone === "string" && timeZone !== "" ? { text, timeZone } : { text }),
    /** `params`: `{limit}`, `{from, limit}` or `{before, limit}`. */
    events: (id, params = {}) => call("GET", `${session(id)}/events${query(params)}`),
    clientModules: async () => (await call("GET", "/api/client-modules")).modules ?? [],
    /** The WebSocket URL of the live stream, the token as a query parameter. */
    liveUrl: (id, location = globalThis.location) => `${socketBase(location)}${session(id)}/live?token=${encodeURIComponent(token)}`,
    /**
     * The WebSocket URL of every Session's alerts and counts (`WS /api/live`);
     * `since` (epoch ms) asks for the alerts stored after it again.
     */
    everywhereUrl: (since = null, location = globalThis.location) => {
      const after = Number.isSafeInteger(since) && since >= 0 ? `&since=${since}` : "";
      return `${socketBase(location)}/api/live?token=${encodeURIComponent(token)}${after}`;
    },
  });
}

/**
 * True when `err` says the host has no such route or method (a host older
 * than this client): a 405, a 501, or a 404 from routing (code "not_found",
 * not "session_not_found").
 */
export function isUnsupported(err) {
  if (!(err instanceof ApiError)) return false;
  return err.status === 405 || err.status === 501 || (err.status === 404 && err.code === "not_found");
}

function socketBase(location) {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}`;
}

function query(params) {
  const search = new URLSearchParams();
  for (const key of ["from", "before", "limit"]) {
    if (params[key] !== undefined && params[key] !== null) search.set(key, String(params[key]));
  }
  const text = search.toString();
  return text === "" ? "" : `?${text}`;
}

async function readJson(response) {
  let text;
  try {
    text = await response.text();
  } catch {
    return null;
  }
  if (text === "") return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
