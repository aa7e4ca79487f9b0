// dsh-client-ui-schedule: reading dsh-tool-schedule's state of a Session
// (`dsh_session_state`: {"reminders": [view, …], "error"?}) and what follows
// from it with the reader's clock — which reminders are due, the Session
// list's "1 reminder waiting", and the notification of a delivered reminder.
//
// The plugin plans its views as of the log's last event (it is pure), so
// `state` says what was true then: whether a reminder is due now is decided
// here, comparing `nextAt` with the reader's clock.

import { countdown, isCanonicalInstant, isObject, localTime, ruleWords, uiLanguage } from "./schedule-words.js";

/** The tool plugin whose state this module reads (its entry-point name). */
export const STATE_PLUGIN = "tool-schedule";
const ID = /^rem-[1-9][0-9]{0,15}$/;

/**
 * The reminders of a state, each `{id, prompt, rule, ruleText, timeZone,
 * nextAt, paused, revision, delivered}`; views it cannot read are skipped
 * (counted in `unreadable`). `error` is the rejected log's
 * `{code, message}`, or null.
 */
export function readState(state) {
  const reminders = [];
  let unreadable = 0;
  const list = isObject(state) && Array.isArray(state.reminders) ? state.reminders : [];
  for (const view of list) {
    const reminder = readReminder(view);
    if (reminder === null) unreadable += 1;
    else reminders.push(reminder);
  }
  const error = isObject(state) && isObject(state.error) ? readError(state.error) : null;
  return { reminders, unreadable, error };
}

function readReminder(view) {
  if (!isObject(view) || typeof view.id !== "string" || !ID.test(view.id)) return null;
  if (typeof view.prompt !== "string" || view.prompt.trim() === "") return null;
  if (view.nextAt !== null && !isCanonicalInstant(view.nextAt)) return null;
  return {
    id: view.id,
    prompt: view.prompt,
    rule: isObject(view.rule) ? view.rule : null,
    ruleText: typeof view.ruleText === "string" ? view.ruleText : null,
    timeZone: typeof view.timeZone === "string" ? view.timeZone : null,
    nextAt: view.nextAt,
    paused: view.state === "paused",
    revision: Number.isSafeInteger(view.revision) && view.revision >= 1 ? view.revision : null,
    delivered: Number.isSafeInteger(view.delivered) && view.delivered >= 0 ? view.delivered : 0,
  };
}

function readError(error) {
  const code = typeof error.code === "string" ? error.code : "schedule_log_invalid";
  return { code, message: typeof error.message === "string" ? error.message : "" };
}

/** True when `reminder` is due at `now` (ms): not paused, and its next time passed. */
export function isDue(reminder, now) {
  return !reminder.paused && reminder.nextAt !== null && Date.parse(reminder.nextAt) <= now;
}

/** Every person-facing string of the list's status, by language. */
export const STATUS = Object.freeze({
  en: {
    waiting: (n) => (n === 1 ? "🔔 1 reminder waiting" : `🔔 ${n} reminders waiting`),
    someWaiting: "🔔 a reminder is waiting",
    stopped: "⚠ reminders stopped",
  },
  zh: {
    waiting: (n) => `🔔 ${n} 个提醒待送达`,
    someWaiting: "🔔 有提醒待送达",
    stopped: "⚠ 提醒已停止",
  },
});

/**
 * The status the host shows in the Session list and the header
 * (registry.registerStatus): a cold Session with due reminders says how many
 * wait; a rejected log says reminders stopped; anything else says nothing.
 * `value` is the full state (`ctx.kind` "state") or the list's compact
 * summary (`{"reminders": N, "next": iso, "due"?: N}`, kind "summary").
 */
export function describeStatus(value, ctx = {}) {
  const words = STATUS[uiLanguage(ctx.lang)];
  const now = Number.isFinite(ctx.now) ? ctx.now : Date.now();
  if (ctx.kind === "summary") {
    if (!isObject(value) || ctx.live !== false) return null;
    if (Number.isSafeInteger(value.due) && value.due > 0) return { text: words.waiting(value.due), tone: "waiting" };
    if (isCanonicalInstant(value.next) && Date.parse(value.next) <= now) return { text: words.someWaiting, tone: "waiting" };
    return null;
  }
  const { reminders, error } = readState(value);
  if (error !== null) return { text: words.stopped, tone: "error" };
  if (ctx.live !== false) return null;
  const due = reminders.filter((reminder) => isDue(reminder, now)).length;
  return due > 0 ? { text: words.waiting(due), tone: "waiting" } : null;
}

/**
 * The notification of a delivered reminder (registry.registerAlert): its
 * prompt as the title, its occurrence (in the reader's zone) and rule as the
 * body. Null for a view that is not a receipt.
 */
export function describeAlert(view, ctx = {}) {
  if (!isObject(view) || typeof view.prompt !== "string" || view.prompt.trim() === "") return null;
  const lang = uiLanguage(ctx.lang);
  const zh = lang === "zh";
  const title = zh ? `🔔 提醒：${view.prompt}` : `🔔 Reminder: ${view.prompt}`;
  const parts = [];
  if (isCanonicalInstant(view.occurrenceAt)) {
    const at = localTime(view.occurrenceAt, lang, ctx);
    parts.push(zh ? `时间 ${at}` : `Due ${at}`);
    if (isCanonicalInstant(view.deliveredAt)) {
      const late = Date.parse(view.deliveredAt) - Date.parse(view.occurrenceAt);
      if (late >= 60_000) parts.push(countdown(view.occurrenceAt, Date.parse(view.deliveredAt), lang));
    }
  }
  const reminder = {
    rule: isObject(view.rule) ? view.rule : null,
    ruleText: typeof view.ruleText === "string" ? view.ruleText : null,
    timeZone: typeof view.timeZone === "string" ? view.timeZone : null,
  };
  const rule = ruleWords(reminder, lang, ctx);
  if (rule !== null) parts.push(rule);
  return { title, body: parts.join(" · ") };
}
