// dsh-client-ui-schedule: the reminders panel — every active reminder of the
// open Session, before it fires, and the reader's say over it.
//
// A panel of the client registry (`registry.registerPanel`): the host mounts it
// when a Session is opened and calls `update(props)` whenever the Session's
// plugin states, its liveness, the language or the clock change (once a second).
// It reads dsh-tool-schedule's state (`props.states["tool-schedule"]`) and draws
//
//   [data-role=reminders]                      the panel (hidden when the Session
//                                               has no reminder state at all; on a
//                                               phone, one line until unfolded)
//     [data-role=reminders-fires]              what the setup does: fires even when
//                                               the conversation is closed, or only
//                                               while it is open (`firesWhenClosed`)
//     [data-reminder-id="rem-1"]               one per active reminder, in creation
//       [data-role=reminder-prompt]            order: the prompt,
//       [data-role=reminder-rule]              the rule in words,
//       [data-role=reminder-next][datetime]    its next time in the reader's zone
//         [data-role=reminder-countdown]       and a live countdown,
//       [data-role=reminder-paused]            "Paused" when it is,
//       [data-action=snooze][data-seconds]     snooze 10 min / 1 h,
//       [data-action=pause] / [=resume]        pause or resume,
//       [data-action=ask-delete] → [=delete]   delete (after a one-click confirmation),
//       [data-role=reminder-error]             why an action failed, in words;
//     [data-role=reminders-waiting]            a closed conversation whose reminders
//       [data-action=resume-session]           wait (only where closed conversations do
//                                               not fire: `firesWhenClosed` false): how
//                                               many are due, with "Deliver now" /
//                                               "Open it now" (resumes it);
//     [data-role=reminders-empty]              how to make one, when there is none (the
//                                               panel is then one line);
//     [data-role=reminders-error]              a rejected reminder log.
//
// Actions go through the host's actions API (`host.act("tool-schedule", action,
// {id, revision, …})`), with the reminder's revision so a stale click is refused
// rather than applied to a reminder that changed meanwhile; the new state comes
// back through the host (a state frame), within a second. The keyboard stays
// on the reminder it acted on (its row is drawn anew). Everything is text.

import { elementFactory, translated, userText } from "./schedule-dom.js";
import { STATE_PLUGIN, isDue, readState } from "./schedule-state.js";
import { countdown, firesWords, localTime, ruleWords, shortWhen, uiLanguage } from "./schedule-words.js";

export const PANEL_ID = "reminders";
/** The snoozes offered, in seconds: 10 minutes and an hour. */
export const SNOOZES = Object.freeze([600, 3600]);
/** Where the panel starts folded to one line (it leaves the transcript the room). */
export const NARROW = "(max-width: 600px)";
const OPEN_KEY = "open";

/** Every person-facing string of the panel, by language. */
export const WORDS = Object.freeze({
  en: Object.freeze({
    title: "Reminders",
    toggle: "Show or hide the reminders",
    next: (when) => `next ${when}`,
    empty: "None yet — ask, e.g. “remind me in 10 minutes to stretch” or “every weekday at 9:00 remind me to stand up”.",
    waiting: (n) =>
      `${n === 1 ? "A reminder is" : `${n} reminders are`} due, but this conversation is closed: ` +
      `${n === 1 ? "it fires" : "they fire"} as soon as the conversation is open again.`,
    deliverNow: "Deliver now",
    notRunning: "This conversation is closed, so its reminders wait: they fire only while it is open.",
    resumeSession: "Open it now",
    paused: "Paused",
    pausedCountdown: "paused",
    noNext: "nothing ahead",
    snooze: "Snooze",
    snoozeFor: { 600: "10 min", 3600: "1 h" },
    snoozeHint: { 600: "Snooze 10 minutes", 3600: "Snooze 1 hour" },
    pause: "Pause",
    resume: "Resume",
    askDelete: "Delete…",
    confirm: "Delete this reminder? It cannot be undone.",
    delete: "Delete",
    keep: "Keep",
    logInvalid: (message) =>
      `Reminders of this conversation stopped: its reminder record is damaged (${message}). ` +
      "They are listed, but none will fire and none can be changed.",
    unreadable: (n) => `${n} reminder${n === 1 ? "" : "s"} could not be shown (written by a newer dsh?).`,
    errors: {
      schedule_not_found: "This reminder is gone: it fired, finished or was deleted meanwhile.",
      schedule_conflict: "This reminder changed meanwhile; it is shown as it is now. Try again if you still want to.",
      schedule_paused: "It is paused: resume it first.",
      schedule_not_paused: "It is not paused.",
      schedule_log_invalid: "Nothing can change: this conversation's reminder record is damaged.",
      schedule_not_installed: "This conversation's assistant has no reminders (it was started before the plugin loaded).",
      invalid_rule: (message) => `That is not possible: ${message}`,
      persistence_uncertain: (message) => `Storage did not confirm it: ${message}`,
      persistence_unavailable: (message) => `Nothing could be stored: ${message}`,
      network: "dsh web did not answer (is it running?). Nothing was changed.",
      other: (message) => `Could not do that: ${message}`,
    },
  }),
  zh: Object.freeze({
    title: "提醒",
    toggle: "显示或隐藏提醒",
    next: (when) => `下一个：${when}`,
    empty: "还没有——直接说，例如“10分钟后提醒我伸展一下”或“每个工作日9点提醒我站会”。",
    waiting: (n) => `有 ${n} 个提醒已到时间，但此对话已关闭：对话重新打开后立即触发。`,
    deliverNow: "立即送达",
    notRunning: "此对话已关闭，它的提醒会等待：只在对话打开时触发。",
    resumeSession: "现在打开",
    paused: "已暂停",
    pausedCountdown: "已暂停",
    noNext: "之后没有了",
    snooze: "推迟",
    snoozeFor: { 600: "10 分钟", 3600: "1 小时" },
    snoozeHint: { 600: "推迟 10 分钟", 3600: "推迟 1 小时" },
    pause: "暂停",
    resume: "继续",
    askDelete: "删除…",
    confirm: "删除这个提醒？删除后无法恢复。",
    delete: "删除",
    keep: "保留",
    logInvalid: (message) => `本对话的提醒已停止：提醒记录已损坏（${message}）。提醒仍会列出，但都不会触发，也无法修改。`,
    unreadable: (n) => `有 ${n} 个提醒无法显示（可能由更新版本的 dsh 写入）。`,
    errors: {
      schedule_not_found: "这个提醒已经不在了：它已触发、结束或被删除。",
      schedule_conflict: "这个提醒刚被修改过，现在显示的是最新状态。如仍需要，请再试一次。",
      schedule_paused: "它已暂停：请先继续。",
      schedule_not_paused: "它没有暂停。",
      schedule_log_invalid: "无法修改：本对话的提醒记录已损坏。",
      schedule_not_installed: "本对话的助手没有提醒功能（它在插件加载前就已启动）。",
      invalid_rule: (message) => `无法这样做：${message}`,
      persistence_uncertain: (message) => `存储没有确认：${message}`,
      persistence_unavailable: (message) => `无法保存：${message}`,
      network: "dsh web 没有响应（它在运行吗？）。没有做任何修改。",
      other: (message) => `没能完成：${message}`,
    },
  }),
});

/** What an action's failure means to the reader, in `lang`. */
export function actionError(err, lang) {
  const errors = WORDS[uiLanguage(lang)].errors;
  if (err?.status === 0) return errors.network;
  const message = typeof err?.message === "string" && err.message !== "" ? err.message : String(err?.code ?? err);
  const known = errors[err?.code];
  if (typeof known === "function") return known(message);
  if (typeof known === "string") return known;
  return errors.other(message);
}

/** The panel, as `registry.registerPanel(PANEL_ID, reminderPanel)` takes it. */
export const reminderPanel = Object.freeze({
  order: 10,
  mount: (host) => new ReminderPanel(host),
});

export class ReminderPanel {
  #host;
  #make;
  #props = null;
  #open;
  #items = new Map();
  #busy = new Set();
  /** The last failure of each reminder's action (and of "session": Deliver now), kept as the error. */
  #errors = new Map();
  #confirming = null;
  #removed = new Set();
  /** While a busy row holds the keyboard: the button to give it back to. */
  #focusFor = null;
  #parts;

  /**
   * `host` is what the client's panel slot gives: `{document, act, resume,
   * onError, storage?, matches?(query)}`. Unfolded unless the reader folded
   * it, or on a phone (`NARROW`) unless the reader unfolded it there.
   */
  constructor(host) {
    this.#host = host;
    this.#make = elementFactory(host.document);
    const stored = host.storage?.get?.(OPEN_KEY) ?? null;
    this.#open = stored === null ? !narrow(host) : stored !== "closed";
    this.#parts = this.#skeleton();
    this.element = this.#parts.root;
    this.element.addEventListener("click", (event) => this.#click(event));
  }

  /** Draw `props` (`{sessionId, live, states, lang, timeZone, locale, now}`). */
  update(props) {
    this.#props = props;
    this.#draw();
  }

  destroy() {
    this.#props = null;
  }

  // ---- drawing ----------------------------------------------------------

  #skeleton() {
    const make = this.#make;
    const root = make("section", "panel dsh-reminders");
    root.setAttribute("data-role", "reminders");
    root.setAttribute("hidden", "");
    const toggle = make("button", "panel-toggle");
    toggle.setAttribute("type", "button");
    toggle.setAttribute("data-action", "toggle-reminders");
    const icon = make("span", "panel-icon", null, "🔔");
    icon.setAttribute("aria-hidden", "true");
    const title = make("span", "panel-title");
    const count = make("span", "panel-count");
    count.setAttribute("data-role", "reminders-count");
    for (const part of [icon, title, count]) toggle.appendChild(part);
    const next = make("span", "panel-summary");
    next.setAttribute("data-role", "reminders-next");
    const badge = make("span", "panel-badge");
    badge.setAttribute("data-role", "reminders-fires");
    const empty = make("span", "panel-empty");
    empty.setAttribute("data-role", "reminders-empty");
    const head = make("div", "panel-head");
    for (const part of [toggle, next, empty, badge]) head.appendChild(part);
    const waiting = make("div", "panel-note panel-waiting");
    waiting.setAttribute("data-role", "reminders-waiting");
    waiting.setAttribute("role", "status");
    const waitingText = make("span", "panel-note-text");
    const deliver = make("button", "primary small");
    deliver.setAttribute("type", "button");
    deliver.setAttribute("data-action", "resume-session");
    waiting.appendChild(waitingText);
    waiting.appendChild(deliver);
    const error = make("p", "panel-note panel-error");
    error.setAttribute("data-role", "reminders-error");
    error.setAttribute("role", "alert");
    const list = make("ul", "panel-list");
    list.setAttribute("data-role", "reminder-list");
    const body = make("div", "panel-body");
    body.setAttribute("id", `dsh-reminders-${Math.random().toString(36).slice(2, 10)}`);
    toggle.setAttribute("aria-controls", body.getAttribute("id"));
    for (const part of [waiting, error, list]) body.appendChild(part);
    root.appendChild(head);
    root.appendChild(body);
    return { root, toggle, title, count, next, badge, waiting, waitingText, deliver, error, list, empty, body };
  }

  #draw() {
    const props = this.#props;
    const parts = this.#parts;
    const state = props?.states?.[STATE_PLUGIN];
    if (props === null || state === undefined || state === null) {
      parts.root.setAttribute("hidden", "");
      return;
    }
    parts.root.removeAttribute("hidden");
    const lang = uiLanguage(props.lang);
    const words = WORDS[lang];
    const now = Number.isFinite(props.now) ? props.now : Date.now();
    const { reminders: all, unreadable, error } = readState(state);
    for (const id of [...this.#removed]) if (!all.some((reminder) => reminder.id === id)) this.#removed.delete(id);
    const reminders = all.filter((reminder) => !this.#removed.has(reminder.id));
    parts.root.setAttribute("lang", lang);
    parts.root.setAttribute("aria-label", words.title);
    parts.root.setAttribute("data-count", String(reminders.length));
    parts.title.textContent = words.title;
    parts.count.textContent = reminders.length > 0 ? ` · ${reminders.length}` : "";
    // With nothing to list the panel is one line: the hint, nothing to unfold.
    const none = reminders.length === 0 && error === null && unreadable === 0;
    const open = this.#open && !none;
    parts.root.setAttribute("data-empty", none ? "true" : "false");
    parts.toggle.setAttribute("aria-expanded", open ? "true" : "false");
    parts.root.setAttribute("data-open", open ? "true" : "false");
    if (none) parts.toggle.setAttribute("disabled", "");
    else parts.toggle.removeAttribute("disabled");
    parts.toggle.setAttribute("title", words.toggle);
    // What the running setup does with a closed conversation (absent: it does not fire).
    const fires = state.firesWhenClosed === true;
    translated(parts.badge, lang, firesWords(fires, lang));
    parts.badge.setAttribute("data-fires-when-closed", String(fires));
    const upcoming = reminders.filter((reminder) => !reminder.paused && reminder.nextAt !== null);
    const soonest = upcoming.sort((a, b) => Date.parse(a.nextAt) - Date.parse(b.nextAt))[0];
    parts.next.textContent = soonest === undefined ? "" : words.next(countdown(soonest.nextAt, now, lang));
    if (open) parts.body.removeAttribute("hidden");
    else parts.body.setAttribute("hidden", "");

    // Where closed conversations do not fire, a closed one delivers nothing:
    // say so, and offer to open it.
    const cold = props.live === false && error === null && !fires;
    const due = cold ? reminders.filter((reminder) => isDue(reminder, now)).length : 0;
    const waits = cold && reminders.some((reminder) => !reminder.paused && reminder.nextAt !== null);
    show(parts.waiting, waits);
    parts.waiting.setAttribute("data-due", String(due));
    parts.waitingText.textContent = due > 0 ? words.waiting(due) : waits ? words.notRunning : "";
    parts.deliver.textContent = due > 0 ? words.deliverNow : words.resumeSession;
    if (this.#busy.has("session")) parts.deliver.setAttribute("disabled", "");
    else parts.deliver.removeAttribute("disabled");

    const problems = [];
    if (error !== null) problems.push(words.logInvalid(error.message || error.code));
    if (unreadable > 0) problems.push(words.unreadable(unreadable));
    if (this.#errors.has("session")) problems.push(actionError(this.#errors.get("session"), lang));
    parts.error.textContent = problems.join(" ");
    show(parts.error, problems.length > 0);

    parts.empty.textContent = words.empty;
    show(parts.empty, none);
    this.#drawList(reminders, { lang, words, now, props, frozen: error !== null });
  }

  #drawList(reminders, ctx) {
    const focused = this.#focused();
    const before = focused === null ? null : this.#items.get(focused.id)?.element;
    const seen = new Set();
    const elements = [];
    for (const reminder of reminders) {
      seen.add(reminder.id);
      const signature = JSON.stringify([
        reminder,
        ctx.lang,
        ctx.props.timeZone,
        ctx.props.locale,
        ctx.frozen,
        this.#busy.has(reminder.id),
        errorKey(this.#errors.get(reminder.id)),
        this.#confirming === reminder.id,
      ]);
      let item = this.#items.get(reminder.id);
      if (item === undefined || item.signature !== signature) {
        const built = this.#item(reminder, ctx);
        item = { ...built, signature };
        this.#items.set(reminder.id, item);
      }
      this.#tick(item, reminder, ctx);
      elements.push(item.element);
    }
    for (const id of [...this.#items.keys()]) if (!seen.has(id)) this.#items.delete(id);
    place(this.#parts.list, elements);
    if (focused !== null && this.#items.get(focused.id)?.element !== before) this.#refocus(focused);
  }

  /** The per-second part of an item: its day-relative time and its countdown. */
  #tick(item, reminder, { lang, words, now, props }) {
    if (item.at === null) return;
    const options = { timeZone: props.timeZone ?? undefined, locale: props.locale ?? undefined };
    item.at.textContent = shortWhen(reminder.nextAt, lang, options, now);
    item.countdown.textContent = reminder.paused ? words.pausedCountdown : countdown(reminder.nextAt, now, lang);
    item.element.setAttribute("data-state", reminder.paused ? "paused" : isDue(reminder, now) ? "due" : "scheduled");
  }

  #item(reminder, { lang, words, props, frozen }) {
    const make = this.#make;
    const options = { timeZone: props.timeZone ?? undefined, locale: props.locale ?? undefined };
    const element = make("li", "panel-item dsh-reminder");
    element.setAttribute("data-reminder-id", reminder.id);
    element.setAttribute("lang", lang);
    const busy = this.#busy.has(reminder.id);
    if (busy) element.setAttribute("aria-busy", "true");

    const line = make("div", "reminder-line");
    userText(line.appendChild(make("strong", "reminder-prompt", null, reminder.prompt))).setAttribute("data-role", "reminder-prompt");
    if (reminder.paused) {
      line.appendChild(make("span", "reminder-paused", null, words.paused)).setAttribute("data-role", "reminder-paused");
    }
    element.appendChild(line);

    const meta = make("div", "reminder-meta");
    const rule = ruleWords(reminder, lang, options);
    if (rule !== null) meta.appendChild(make("span", "reminder-rule", null, rule)).setAttribute("data-role", "reminder-rule");
    let at = null;
    let clock = null;
    if (reminder.nextAt !== null) {
      if (rule !== null) meta.appendChild(dot(make));
      const next = make("time", "reminder-next");
      next.setAttribute("data-role", "reminder-next");
      next.setAttribute("datetime", reminder.nextAt);
      next.setAttribute("title", `${localTime(reminder.nextAt, lang, options)} · UTC ${reminder.nextAt}`);
      at = make("span", "reminder-at");
      at.setAttribute("data-role", "reminder-at");
      clock = make("span", "reminder-countdown");
      clock.setAttribute("data-role", "reminder-countdown");
      next.appendChild(at);
      next.appendChild(dot(make));
      next.appendChild(clock);
      meta.appendChild(next);
    } else {
      if (rule !== null) meta.appendChild(dot(make));
      meta.appendChild(make("span", "reminder-none", null, words.noNext));
    }
    element.appendChild(meta);

    if (!frozen) element.appendChild(this.#actions(reminder, words, busy));
    const error = this.#errors.get(reminder.id);
    if (error !== undefined) {
      const problem = make("p", "reminder-error", null, actionError(error, lang));
      problem.setAttribute("data-role", "reminder-error");
      problem.setAttribute("role", "alert");
      element.appendChild(problem);
    }
    return { element, at, countdown: clock };
  }

  #actions(reminder, words, busy) {
    const make = this.#make;
    const button = (action, text, extra = {}) => {
      const element = make("button", extra.className ?? "chip", null, text);
      element.setAttribute("type", "button");
      element.setAttribute("data-action", action);
      for (const [name, value] of Object.entries(extra.attrs ?? {})) element.setAttribute(name, value);
      if (busy) element.setAttribute("disabled", "");
      return element;
    };
    const actions = make("div", "panel-actions");
    if (this.#confirming === reminder.id) {
      actions.setAttribute("data-role", "reminder-confirm");
      actions.appendChild(make("span", "reminder-confirm-text", null, words.confirm));
      actions.appendChild(button("delete", words.delete, { className: "chip danger" }));
      actions.appendChild(button("cancel-delete", words.keep));
      return actions;
    }
    if (!reminder.paused && reminder.nextAt !== null) {
      const group = make("span", "snooze-group");
      group.setAttribute("role", "group");
      group.setAttribute("aria-label", words.snooze);
      group.appendChild(make("span", "snooze-label", null, `${words.snooze}:`));
      for (const seconds of SNOOZES) {
        group.appendChild(
          button("snooze", words.snoozeFor[seconds], {
            attrs: { "data-seconds": String(seconds), title: words.snoozeHint[seconds], "aria-label": words.snoozeHint[seconds] },
          }),
        );
      }
      actions.appendChild(group);
    }
    actions.appendChild(reminder.paused ? button("resume", words.resume) : button("pause", words.pause));
    actions.appendChild(button("ask-delete", words.askDelete));
    return actions;
  }

  // ---- actions ----------------------------------------------------------

  #click(event) {
    const button = event.target?.closest?.("[data-action]");
    if (!button || button.hasAttribute("disabled")) return;
    const action = button.getAttribute("data-action");
    if (action === "toggle-reminders") {
      this.#open = !this.#open;
      this.#host.storage?.set?.(OPEN_KEY, this.#open ? "open" : "closed");
      this.#draw();
      return;
    }
    if (action === "resume-session") {
      this.#resume();
      return;
    }
    const id = button.closest("[data-reminder-id]")?.getAttribute("data-reminder-id");
    const reminder = this.#current(id);
    if (reminder === undefined) return;
    if (action === "ask-delete" || action === "cancel-delete") {
      this.#confirming = action === "ask-delete" ? id : null;
      this.#errors.delete(id);
      this.#draw();
      this.#parts.list.querySelector?.(`[data-reminder-id="${id}"] [data-action=${action === "ask-delete" ? "delete" : "ask-delete"}]`)?.focus?.();
      return;
    }
    const args = { id };
    if (reminder.revision !== null) args.revision = reminder.revision;
    if (action === "snooze") args.seconds = Number(button.getAttribute("data-seconds"));
    if (!["delete", "pause", "resume", "snooze"].includes(action)) return;
    this.#act(id, action, args);
  }

  #current(id) {
    const state = this.#props?.states?.[STATE_PLUGIN];
    return readState(state).reminders.find((reminder) => reminder.id === id);
  }

  async #act(id, action, args) {
    this.#busy.add(id);
    this.#errors.delete(id);
    this.#confirming = null;
    this.#draw();
    try {
      await this.#host.act(STATE_PLUGIN, action, args);
      // Gone at once; the state that comes back confirms it.
      if (action === "delete") this.#removed.add(id);
    } catch (err) {
      this.#errors.set(id, err);
      this.#host.onError?.(err);
    } finally {
      this.#busy.delete(id);
      if (this.#props !== null) this.#draw();
    }
  }

  /**
   * Which row has the keyboard, and on what (`{id, action, seconds}`), or
   * null: a row is drawn anew whenever it changes (busy, then changed, then
   * the state read back), and the keyboard must go with it.
   */
  #focused() {
    const active = this.#host.document?.activeElement ?? null;
    if (active === null) return null;
    for (const [id, item] of this.#items) {
      if (!item.element.contains?.(active)) continue;
      const action = active.getAttribute?.("data-action") ?? null;
      if (action === null) return this.#focusFor?.id === id ? this.#focusFor : { id, action: null, seconds: null };
      return { id, action, seconds: active.getAttribute("data-seconds") };
    }
    return null;
  }

  /**
   * Put the keyboard back on the row of `kept.id`: the same button, else its
   * counterpart (Pause ↔ Resume), else the row's first button; the row
   * itself while its buttons are disabled (busy); the panel's toggle if the
   * row is gone.
   */
  #refocus(kept) {
    const row = this.#items.get(kept.id)?.element;
    if (row === undefined) {
      this.#focusFor = null;
      this.#parts.toggle.focus?.();
      return;
    }
    const buttons = [...(row.querySelectorAll?.("button") ?? [])];
    const named = (name) =>
      buttons.find((button) => button.getAttribute("data-action") === name && button.getAttribute("data-seconds") === kept.seconds) ??
      buttons.find((button) => button.getAttribute("data-action") === name);
    const counterpart = { pause: "resume", resume: "pause" }[kept.action];
    const target = named(kept.action) ?? (counterpart ? named(counterpart) : undefined) ?? buttons[0];
    if (target !== undefined && !target.hasAttribute("disabled")) {
      this.#focusFor = null;
      target.focus?.();
      return;
    }
    // A disabled button cannot hold the keyboard: the row does, and remembers for what.
    this.#focusFor = kept;
    row.setAttribute("tabindex", "-1");
    row.focus?.();
  }

  async #resume() {
    this.#busy.add("session");
    this.#errors.delete("session");
    this.#draw();
    try {
      await this.#host.resume();
    } catch (err) {
      this.#errors.set("session", err);
      this.#host.onError?.(err);
    } finally {
      this.#busy.delete("session");
      if (this.#props !== null) this.#draw();
    }
  }
}

/** True on a phone-sized screen (the host answers media queries; older hosts do not). */
function narrow(host) {
  try {
    return host.matches?.(NARROW) === true;
  } catch {
    return false;
  }
}

/** What identifies a failure for redrawing: the same words come from the same key. */
function errorKey(err) {
  return err === undefined ? null : [err?.status ?? null, err?.code ?? null, String(err?.message ?? err)];
}

function show(element, visible) {
  if (visible) element.removeAttribute("hidden");
  else element.setAttribute("hidden", "");
}

function dot(make) {
  const element = make("span", "dsh-schedule-separator", null, " · ");
  element.setAttribute("aria-hidden", "true");
  return element;
}

/** Make `elements` the children of `parent`, moving only what changed (focus stays). */
function place(parent, elements) {
  const wanted = new Set(elements);
  for (const child of [...parent.children]) if (!wanted.has(child)) child.remove();
  let cursor = parent.firstChild;
  for (const element of elements) {
    if (element === cursor) {
      cursor = cursor.nextSibling;
    } else {
      parent.insertBefore(element, cursor);
    }
  }
}
