// dsh's service worker (served at /sw.js, scope /): shows a pushed alert as a
// system notification even when no tab is open, and handles its buttons.
//
// A push's payload is JSON {title, body, sessionId, tag, url, seq, act,
// snooze} (dsh-notify's sender). The notification has the buttons Snooze 10
// min (only when `snooze`) and Done (only when `act`, the alert's capability,
// is there). A button posts {capability, action} to /push/act: the
// capability is the only credential the worker holds, and it can do no more
// than snooze or read that one alert. A click elsewhere focuses a tab of this
// host and asks it (postMessage {kind: "dsh.open-session", sessionId}) to
// open the conversation, or opens /?session=<id> when no tab is open.
//
// A classic script, not a module (module service workers are not everywhere
// yet); everything is reached through `self`, so node tests run it in a
// sandbox.

const WORDS = {
  en: {
    snooze: "Snooze 10 min",
    done: "Done",
    fallback: "A reminder",
    failed: "Couldn't reach dsh: open the conversation instead.",
    refused: "That didn't work: open the conversation instead.",
    expired: "This notification has expired: open the conversation instead.",
  },
  zh: {
    snooze: "推迟 10 分钟",
    done: "完成",
    fallback: "一条提醒",
    failed: "无法连接 dsh：请打开对话。",
    refused: "操作没有成功：请打开对话。",
    expired: "此通知已过期：请打开对话。",
  },
};

function words() {
  const lang = String(self.navigator?.language ?? "en").toLowerCase();
  return lang.startsWith("zh") ? WORDS.zh : WORDS.en;
}

function readPayload(data) {
  try {
    const parsed = data?.json();
    if (parsed !== null && typeof parsed === "object" && typeof parsed.title === "string") return parsed;
  } catch {
    // Not JSON: shown as a plain reminder below.
  }
  return null;
}

function options(alert, body) {
  const text = words();
  const actions = [];
  if (typeof alert.act === "string") {
    if (alert.snooze === true) actions.push({ action: "snooze", title: text.snooze });
    actions.push({ action: "done", title: text.done });
  }
  return { body, tag: String(alert.tag ?? ""), data: alert, actions };
}

async function showAlert(alert, body = String(alert.body ?? "")) {
  await self.registration.showNotification(alert.title, options(alert, body));
}

self.addEventListener("install", (event) => {
  event.waitUntil(self.skipWaiting());
});

self.addEventListener("activate", (event) => {
  event.waitUntil(self.clients.claim());
});

self.addEventListener("push", (event) => {
  const alert = readPayload(event.data);
  // A push must always show something (browsers penalise silent pushes).
  event.waitUntil(alert === null ? self.registration.showNotification(words().fallback, {}) : showAlert(alert));
});

async function act(alert, action) {
  let response = null;
  try {
    response = await fetch("/push/act", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ capability: alert.act, action }),
      credentials: "omit",
      cache: "no-store",
    });
  } catch {
    response = null;
  }
  if (response?.ok) return;
  // Not done: the notification comes back, saying why, so the reminder is not lost.
  const text = words();
  const why = response === null ? text.failed : response.status === 403 ? text.expired : text.refused;
  await showAlert(alert, why);
}

function sessionUrl(alert) {
  const fallback = new URL(`/?session=${encodeURIComponent(String(alert.sessionId ?? ""))}`, self.location.origin);
  if (typeof alert.url !== "string") return fallback.href;
  try {
    const given = new URL(alert.url, self.location.origin);
    if (given.origin === self.location.origin) return given.href;
  } catch {
    // A malformed url: the session's own address below.
  }
  return fallback.href;
}

async function openSession(alert) {
  const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  const tab = windows.find((client) => new URL(client.url).origin === self.location.origin);
  if (tab !== undefined) {
    tab.postMessage({ kind: "dsh.open-session", sessionId: alert.sessionId });
    try {
      await tab.focus();
    } catch {
      // Focus is the browser's to grant (only from a real click): the tab opens it anyway.
    }
    return;
  }
  await self.clients.openWindow(sessionUrl(alert));
}

self.addEventListener("notificationclick", (event) => {
  const note = event.notification;
  const alert = note.data ?? {};
  note.close();
  if ((event.action === "snooze" || event.action === "done") && typeof alert.act === "string") {
    event.waitUntil(act(alert, event.action));
  } else {
    event.waitUntil(openSession(alert));
  }
});
