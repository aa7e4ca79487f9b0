// dsh-notify's page module: Web Push for this browser.
//
// - On load it registers the service worker /sw.js (scope /), and re-posts
//   the browser's existing push subscription if the reader had switched
//   notifications on (so a host that lost it learns it again). It never
//   subscribes on load.
// - Only after the reader presses "Notify me" ([data-role=notify], drawn by
//   the host's attention.js) and the button ends "on" does it subscribe
//   (pushManager.subscribe with the key from GET /api/push/key) and post the
//   subscription (POST /api/push/subscriptions); a press that ends "off"
//   deletes it here and at the host.
// - While the tab is visible it reads GET /api/health every minute (and when
//   the tab is shown again): when `notify.failing` names a channel, a quiet
//   line [data-role=notify-status] beside the controls says since when
//   ("Couldn't reach your phone since 14:02").
// - The worker asks an open tab to show a conversation (postMessage
//   {kind: "dsh.open-session", sessionId}); the module opens it.
//
// The access token is the page's (localStorage "dsh.token", token.js).
// Everything is injected into `createPush`, so node tests drive it; the
// module's `register(registry)` wires the browser's globals.

import { failingText } from "./notify-words.js";

export const SUBSCRIPTION_KEY = "dsh.push.subscription";
export const NOTIFY_KEY = "dsh.notify";
export const TOKEN_KEY = "dsh.token";
export const HEALTH_POLL_MS = 60_000;
export const DECISION_POLL_MS = 200;
export const DECISION_DEADLINE_MS = 120_000;

/** The key bytes of base64url `text` (applicationServerKey). */
export function keyBytes(text) {
  const base64 = text.replace(/-/g, "+").replace(/_/g, "/");
  const binary = atob(base64 + "=".repeat((4 - (base64.length % 4)) % 4));
  return Uint8Array.from(binary, (char) => char.charCodeAt(0));
}

function sameKey(buffer, bytes) {
  if (buffer === null || buffer === undefined) return false;
  const held = new Uint8Array(buffer);
  return held.length === bytes.length && held.every((value, index) => value === bytes[index]);
}

/**
 * Options: `document`, `serviceWorker` (navigator.serviceWorker, or null),
 * `fetch`, `token()` (the access token or null), `local` (localStorage or
 * null), `lang()` ("en" | "zh"), `now()`, `sleep(ms)`, `setInterval`,
 * `openSession(id)`, `log(message, error)`.
 *
 * Returns `{start(), decided(state), checkHealth(), status}`.
 */
export function createPush({
  document,
  serviceWorker,
  fetch,
  token,
  local = null,
  lang = () => "en",
  now = () => Date.now(),
  sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  setInterval: every = (callback, ms) => setInterval(callback, ms),
  openSession = () => {},
  log = () => {},
}) {
  const status = document.createElement("span");
  status.setAttribute("class", "notify-status");
  status.setAttribute("data-role", "notify-status");
  status.setAttribute("role", "status");
  status.setAttribute("hidden", "");

  async function api(method, path, body) {
    const headers = { Authorization: `Bearer ${token() ?? ""}` };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: "no-store",
    });
    if (!response.ok && response.status !== 404) throw new Error(`${method} ${path} answered ${response.status}`);
    return response;
  }

  async function post(subscription) {
    const response = await api("POST", "/api/push/subscriptions", subscription.toJSON());
    const { id } = await response.json();
    write(local, SUBSCRIPTION_KEY, id);
  }

  /** Subscribe this browser (after the reader's "Notify me") and tell the host. */
  async function subscribe() {
    const registration = await serviceWorker.ready;
    const { publicKey } = await (await api("GET", "/api/push/key")).json();
    const key = keyBytes(publicKey);
    let subscription = await registration.pushManager.getSubscription();
    if (subscription !== null && !sameKey(subscription.options?.applicationServerKey, key)) {
      // Made with another host's key (a data dir replaced): it cannot be used.
      await subscription.unsubscribe();
      subscription = null;
    }
    subscription ??= await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
    await post(subscription);
  }

  /** Forget this browser's subscription, here and at the host. */
  async function unsubscribe() {
    const id = read(local, SUBSCRIPTION_KEY);
    if (id !== null) await api("DELETE", `/api/push/subscriptions/${encodeURIComponent(id)}`);
    write(local, SUBSCRIPTION_KEY, null);
    const registration = await serviceWorker.ready;
    await (await registration.pushManager.getSubscription())?.unsubscribe();
  }

  /** The "Notify me" button ended in `state` after a press: act on it. */
  async function decided(state) {
    try {
      if (state === "on") await subscribe();
      else if (state === "off") await unsubscribe();
    } catch (error) {
      log("dsh-notify: push subscription failed", error);
    }
  }

  async function afterPress(button) {
    const deadline = now() + DECISION_DEADLINE_MS;
    // While the browser asks the reader, the button says "asking".
    while (button.getAttribute("data-state") === "asking" && now() < deadline) await sleep(DECISION_POLL_MS);
    await decided(button.getAttribute("data-state"));
  }

  function onClick(event) {
    const button = event.target?.closest?.("[data-role=notify]");
    if (button) afterPress(button);
  }

  async function resync() {
    if (read(local, NOTIFY_KEY) !== "on") return;
    const registration = await serviceWorker.ready;
    const subscription = await registration.pushManager.getSubscription();
    if (subscription !== null) await post(subscription);
  }

  function place() {
    if (status.parentNode !== null) return;
    const controls = document.querySelector("[data-role=attention]");
    controls?.parentNode?.insertBefore(status, controls.nextSibling);
  }

  /** Read /api/health once and show or hide the status line. */
  async function checkHealth() {
    if (document.hidden === true) return;
    let text = null;
    try {
      const response = await api("GET", "/api/health");
      if (response.ok) text = failingText((await response.json())?.notify?.failing ?? null, lang(), now());
    } catch {
      text = null; // The page's own banner speaks of a host that cannot be reached.
    }
    place();
    if (text === null) {
      status.setAttribute("hidden", "");
      status.replaceChildren();
    } else {
      status.replaceChildren(text);
      status.removeAttribute("hidden");
    }
  }

  function start() {
    document.documentElement.addEventListener("click", onClick);
    document.addEventListener("visibilitychange", () => checkHealth());
    every(() => checkHealth(), HEALTH_POLL_MS);
    checkHealth();
    if (serviceWorker === null) return;
    serviceWorker.addEventListener("message", (event) => {
      if (event.data?.kind === "dsh.open-session" && typeof event.data.sessionId === "string") {
        openSession(event.data.sessionId);
      }
    });
    serviceWorker
      .register("/sw.js", { scope: "/" })
      .then(() => resync())
      .catch((error) => log("dsh-notify: the service worker could not be registered", error));
  }

  return Object.freeze({ start, decided, checkHealth, status });
}

/** The page's hook: start Web Push with the browser's globals (nothing to register). */
export function register(registry) {
  if (typeof window === "undefined") return;
  const storage = (name) => {
    try {
      return window[name] ?? null;
    } catch {
      return null;
    }
  };
  createPush({
    document,
    serviceWorker: "serviceWorker" in navigator && "PushManager" in window ? navigator.serviceWorker : null,
    fetch: window.fetch.bind(window),
    token: () => read(storage("localStorage"), TOKEN_KEY),
    local: storage("localStorage"),
    lang: () => registry.lang(),
    openSession: (id) => {
      window.location.hash = `#/s/${encodeURIComponent(id)}`;
    },
    log: (message, error) => console.warn(message, error),
  }).start();
}

function read(storage, key) {
  try {
    return storage?.getItem(key) ?? null;
  } catch {
    return null;
  }
}

function write(storage, key, value) {
  try {
    if (value === null) storage?.removeItem(key);
    else storage?.setItem(key, value);
  } catch {
    // Storage can be disabled: the subscription is found again through the browser.
  }
}
