// Storage status: tells the person while their messages are not being saved.
//
// Polls GET /api/health (every POLL_MS, and at once on start). While the host
// answers 503 `storage_degraded` — some Session has events storage has not
// confirmed, and the host keeps retrying — a banner [data-role=storage-status]
// shows the host's own words behind a translated prefix; the next healthy
// answer hides it. Any other failure (the host restarting, the network) is
// not this banner's business and leaves it as it is. Text only, never HTML.

import { h } from "./dom.js";

export const POLL_MS = 10_000;
export const DEGRADED = "storage_degraded";

const PREFIX = {
  en: "Not saved yet:",
  zh: "尚未保存：",
};

/**
 * Start watching. `health()` resolves when storage is fine and rejects with
 * an ApiError otherwise; `lang()` names the reader's language; the banner is
 * appended to `parent`. Returns `{ node, check(), stop() }`.
 */
export function watchStorage({ document, parent, health, lang = () => "en", timers = globalThis, interval = POLL_MS }) {
  const node = h(document, "div", {
    class: "banner storage-status",
    "data-role": "storage-status",
    role: "status",
    hidden: true,
  });
  parent.appendChild(node);
  let timer = null;
  let stopped = false;

  function show(message) {
    if (message === null) {
      node.textContent = "";
      node.setAttribute("hidden", "");
      return;
    }
    node.textContent = `${PREFIX[lang()] ?? PREFIX.en} ${message}`;
    node.removeAttribute("hidden");
  }

  async function check() {
    try {
      await health();
      if (!stopped) show(null);
    } catch (err) {
      if (!stopped && err?.code === DEGRADED) show(String(err.message ?? ""));
    }
  }

  async function loop() {
    await check();
    if (stopped) return;
    timer = timers.setTimeout(loop, interval);
    timer?.unref?.(); // under node (tests), a poll alone never keeps the process alive
  }

  loop();
  return Object.freeze({
    node,
    check,
    stop() {
      stopped = true;
      if (timer !== null) timers.clearTimeout(timer);
      timer = null;
    },
  });
}
