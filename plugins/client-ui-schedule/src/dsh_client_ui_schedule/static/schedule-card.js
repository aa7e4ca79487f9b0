// dsh-client-ui-schedule: the cards of the transcript — a delivered reminder's
// receipt and the warning of a rejected reminder log.
//
// `renderScheduleReminder(view, event, ctx, fired?)` draws the receipt of one
// delivered occurrence (the view of a `schedule/change` dispatch: {scheduleId,
// prompt, occurrenceAt, deliveryMode: "session-local"} plus, from protocol v2
// on, {deliveredAt, missed, rule, ruleText, timeZone, revision} and, once it
// was snoozed, {snoozedAs}): the prompt, the occurrence in the reader's zone,
// "overdue by …" when the delivery came a minute or more after the occurrence,
// how many earlier occurrences it stands for ("100000+" at MISSED_CAP), the rule in words, the id, what
// the running setup does (fires even while the conversation is closed, or
// only while it is open: the plugin state's `firesWhenClosed`, when the host
// gives `ctx.pluginState`), and its Snooze / Done (schedule-after.js). When the
// host folded the reminder's follow-up message into the card (`ctx.followup`),
// the text the model was given goes inside it, behind the host's closed
// disclosure.
//
// `renderScheduleNotice(view, event, ctx)` draws a notice: a rejected log
// ({notice: "log_invalid", seq, reason}), or reminders deferred because the
// conversation's reminder turns are spent ({notice: "deliveries_deferred",
// limit: "hour" | "day", max, until, reason}: they wait, none is lost).
//
// Both depend only on (view, ctx) and what the page knows of a card since it
// fired (`fired`, a FiredCards) — `ctx` is {document?, lang?: "en" | "zh",
// locale?, timeZone?, followup?, seq?, sessionId?, act?, markRead?,
// pluginState?, onError?} — so the host can draw them again when the language
// changes; a malformed view becomes a fallback card showing the raw JSON.
// Every piece of text goes through `textContent`.

import { FiredCards, afterFiring } from "./schedule-after.js";
import { bell, documentOf, elementFactory, separator, translated, userText } from "./schedule-dom.js";
import { STATE_PLUGIN } from "./schedule-state.js";
import {
  firesWords,
  isCanonicalInstant,
  isObject,
  localTime,
  ruleWords,
  spellDuration,
  uiLanguage,
} from "./schedule-words.js";

/** A delivery at least this late (ms) says "overdue by …" on the card. */
export const OVERDUE_AFTER_MS = 60_000;

/** The schedule plugin counts `missed` up to this (`series.COUNT_CAP`): it means "or more". */
export const MISSED_CAP = 100_000;

/** Every person-facing string of the cards, by language. */
export const LABELS = Object.freeze({
  en: Object.freeze({
    reminder: "Reminder",
    unreadable: "Reminder (unreadable)",
    timeHint: "UTC: ",
    overdue: (duration) => `overdue by ${duration}`,
    missed: (count) =>
      count >= MISSED_CAP
        ? `stands for ${count}+ missed occurrences`
        : `stands for ${count} missed ${count === 1 ? "occurrence" : "occurrences"}`,
    stopped: "Reminders stopped",
    noticeBody: (seq, reason) =>
      `The reminder record of this conversation is damaged at entry ${seq}: ${reason}. ` +
      "Reminders set before it are still listed, but none of them will fire.",
    deferred: "Reminders waiting",
    deferredBody: (max, limit, until) =>
      `Reminders started ${max} replies in the last ${limit === "day" ? "day" : "hour"}, ` +
      "the most this conversation allows. Reminders that fall due wait and are delivered " +
      `from ${until}; none is lost.`,
  }),
  zh: Object.freeze({
    reminder: "提醒",
    unreadable: "提醒（无法显示）",
    timeHint: "UTC: ",
    overdue: (duration) => `晚了 ${duration}`,
    missed: (count) => (count >= MISSED_CAP ? `含错过的 ${count} 次以上` : `含错过的 ${count} 次`),
    stopped: "提醒已停止",
    noticeBody: (seq, reason) =>
      `本对话的提醒记录在第 ${seq} 条处损坏：${reason}。` +
      "之前设置的提醒仍会列出，但都不会再触发。",
    deferred: "提醒在等待",
    deferredBody: (max, limit, until) =>
      `过去一${limit === "day" ? "天" : "小时"}内提醒已触发 ${max} 次回复，达到本对话的上限。` +
      `到期的提醒会等待，从 ${until} 起送达，不会丢失。`,
  }),
});

// Translucent neutrals read well on light and dark host themes alike; the host
// may override them through the custom properties.
const STYLES = Object.freeze({
  row: {
    display: "flex",
    alignItems: "flex-start",
    gap: "0.6em",
    margin: "0.4em 0",
    padding: "0.55em 0.8em",
    border: "1px solid var(--dsh-schedule-border, rgba(127, 127, 127, 0.28))",
    borderLeft: "3px solid var(--dsh-schedule-accent, #d4a017)",
    borderRadius: "8px",
    background: "var(--dsh-schedule-surface, rgba(127, 127, 127, 0.07))",
    lineHeight: "1.4",
  },
  warning: { borderLeft: "3px solid var(--dsh-schedule-warning, #c0392b)" },
  bell: { fontSize: "1.15em", lineHeight: "1.2", flex: "none" },
  body: { display: "flex", flexDirection: "column", gap: "0.15em", minWidth: "0" },
  // Inline flow, not flex: a long prompt wraps beside the label instead of under it.
  heading: { overflowWrap: "anywhere" },
  label: {
    marginRight: "0.5em",
    fontSize: "0.78em",
    fontWeight: "600",
    letterSpacing: "0.03em",
    textTransform: "uppercase",
    opacity: "0.7",
  },
  prompt: { fontWeight: "600", whiteSpace: "pre-wrap", overflowWrap: "anywhere" },
  meta: { fontSize: "0.85em", opacity: "0.72", overflowWrap: "anywhere" },
  late: { fontWeight: "600" },
  id: { fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace" },

  followup: { marginTop: "0.35em", fontSize: "0.85em" },
  raw: {
    margin: "0.2em 0 0",
    fontSize: "0.85em",
    whiteSpace: "pre-wrap",
    overflowWrap: "anywhere",
    opacity: "0.8",
  },
});

/**
 * Render one reminder receipt; a malformed view yields the fallback row.
 * `fired` keeps what happened to cards since they fired (snoozed, done) for
 * the page; without one the card keeps it itself.
 */
export function renderScheduleReminder(view, event, ctx, fired = new FiredCards()) {
  const { make, lang, options } = setUp(ctx);
  const reminder = readReceipt(view);
  if (reminder === null) return fallbackRow(make, lang, view);
  return reminderRow(make, lang, reminder, options, fired);
}

/** Render the notice of a rejected schedule log; a malformed view yields the fallback row. */
export function renderScheduleNotice(view, event, ctx) {
  const { make, lang } = setUp(ctx);
  const notice = readNotice(view);
  if (notice === null) return fallbackRow(make, lang, view);
  const labels = LABELS[lang];
  const row = make("div", "dsh-schedule-reminder dsh-schedule-notice", {
    ...STYLES.row,
    ...STYLES.warning,
  });
  row.setAttribute("data-role", "schedule-notice");
  const body = make("div", "dsh-schedule-body", STYLES.body);
  const label = make("span", "dsh-schedule-label", STYLES.label);
  const text = make("div", "dsh-schedule-meta", STYLES.meta);
  if (notice.kind === "deliveries_deferred") {
    row.setAttribute("data-notice-until", notice.until);
    const until = localTime(notice.until, lang, setUp(ctx).options);
    body.appendChild(translated(label, lang, labels.deferred));
    translated(text, lang, labels.deferredBody(notice.max, notice.limit, until));
  } else {
    row.setAttribute("data-notice-seq", String(notice.seq));
    body.appendChild(translated(label, lang, labels.stopped));
    translated(text, lang, labels.noticeBody(notice.seq, notice.reason));
  }
  body.appendChild(text);
  row.appendChild(bell(make, "⚠️"));
  row.appendChild(body);
  return row;
}

function setUp(ctx) {
  const options = ctx ?? {};
  return { make: elementFactory(documentOf(options)), lang: uiLanguage(options.lang), options };
}

function reminderRow(make, lang, reminder, options, fired) {
  const labels = LABELS[lang];
  const row = make("div", "dsh-schedule-reminder", STYLES.row);
  row.setAttribute("data-role", "schedule-reminder");
  row.setAttribute("data-schedule-id", reminder.scheduleId);

  const body = make("div", "dsh-schedule-body", STYLES.body);
  const heading = make("div", "dsh-schedule-heading", STYLES.heading);
  const label = make("span", "dsh-schedule-label", STYLES.label);
  heading.appendChild(translated(label, lang, labels.reminder));
  heading.appendChild(userText(make("strong", "dsh-schedule-prompt", STYLES.prompt, reminder.prompt)));

  const meta = make("div", "dsh-schedule-meta", STYLES.meta);
  const when = localTime(reminder.occurrenceAt, lang, options);
  const time = make("time", "dsh-schedule-time", null, when);
  time.setAttribute("datetime", reminder.occurrenceAt);
  time.setAttribute("title", labels.timeHint + reminder.occurrenceAt);
  meta.appendChild(time);
  const late = lateness(reminder);
  if (late >= OVERDUE_AFTER_MS) {
    const overdue = make("span", "dsh-schedule-overdue", STYLES.late);
    overdue.setAttribute("data-role", "reminder-overdue");
    meta.appendChild(separator(make));
    meta.appendChild(translated(overdue, lang, labels.overdue(spellDuration(late, lang))));
  }
  if (reminder.missed > 0) {
    const missed = make("span", "dsh-schedule-missed");
    missed.setAttribute("data-role", "reminder-missed");
    missed.setAttribute("data-missed", String(reminder.missed));
    meta.appendChild(separator(make));
    meta.appendChild(translated(missed, lang, labels.missed(reminder.missed)));
  }
  const words = ruleWords(reminder, lang, options);
  if (words !== null) {
    const rule = make("span", "dsh-schedule-rule");
    rule.setAttribute("data-role", "reminder-rule");
    meta.appendChild(separator(make));
    meta.appendChild(translated(rule, lang, words));
  }
  meta.appendChild(separator(make));
  meta.appendChild(make("code", "dsh-schedule-id", STYLES.id, reminder.scheduleId));
  const fires = firesWhenClosed(options);
  if (fires !== null) {
    const setup = make("span", "dsh-schedule-fires");
    setup.setAttribute("data-role", "reminder-fires");
    setup.setAttribute("data-fires-when-closed", String(fires));
    meta.appendChild(separator(make));
    meta.appendChild(translated(setup, lang, firesWords(fires, lang)));
  }

  body.appendChild(heading);
  body.appendChild(meta);
  const after = afterFiring(make, lang, row, reminder, options, fired);
  if (after !== null) body.appendChild(after);
  // The text the model was given, closed, inside the card (the host made it).
  const followup = options.followup?.element;
  if (followup && typeof followup.nodeType === "number") {
    followup.setAttribute("data-schedule-followup", "");
    if (followup.style) Object.assign(followup.style, STYLES.followup);
    body.appendChild(followup);
  }
  row.appendChild(bell(make));
  row.appendChild(body);
  return row;
}

/** What the host's setup does with a closed conversation's reminders, when the host says (else null). */
function firesWhenClosed(options) {
  if (typeof options.pluginState !== "function") return null;
  let state;
  try {
    state = options.pluginState(STATE_PLUGIN);
  } catch {
    return null;
  }
  if (!isObject(state)) return null;
  return state.firesWhenClosed === true;
}

function fallbackRow(make, lang, view) {
  const row = make("div", "dsh-schedule-reminder dsh-schedule-invalid", STYLES.row);
  row.setAttribute("data-role", "schedule-reminder");
  const body = make("div", "dsh-schedule-body", STYLES.body);
  const label = make("span", "dsh-schedule-label", STYLES.label);
  body.appendChild(translated(label, lang, LABELS[lang].unreadable));
  body.appendChild(make("pre", "dsh-schedule-raw", STYLES.raw, rawJson(view)));
  row.appendChild(bell(make));
  row.appendChild(body);
  return row;
}

// -- reading views ------------------------------------------------------------------------

/** The view's fields, or null when a required one is missing or of the wrong shape. */
export function readReceipt(view) {
  if (!isObject(view)) return null;
  const { scheduleId, prompt, occurrenceAt, deliveryMode } = view;
  if (typeof scheduleId !== "string" || scheduleId.trim() === "") return null;
  if (typeof prompt !== "string" || prompt.trim() === "") return null;
  if (deliveryMode !== "session-local") return null;
  if (!isCanonicalInstant(occurrenceAt)) return null;
  // Optional (protocol v2 receipts): anything unreadable is simply not shown.
  return {
    scheduleId,
    prompt,
    occurrenceAt,
    deliveryMode,
    deliveredAt: isCanonicalInstant(view.deliveredAt) ? view.deliveredAt : null,
    missed: Number.isSafeInteger(view.missed) && view.missed > 0 ? view.missed : 0,
    rule: isObject(view.rule) ? view.rule : null,
    ruleText: typeof view.ruleText === "string" ? view.ruleText : null,
    timeZone: typeof view.timeZone === "string" ? view.timeZone : null,
    snoozedAs: typeof view.snoozedAs === "string" && view.snoozedAs !== "" ? view.snoozedAs : null,
  };
}

function readNotice(view) {
  if (!isObject(view)) return null;
  if (typeof view.reason !== "string" || view.reason.trim() === "") return null;
  if (view.notice === "deliveries_deferred") {
    if (view.limit !== "hour" && view.limit !== "day") return null;
    if (!Number.isSafeInteger(view.max) || view.max < 1) return null;
    if (!isCanonicalInstant(view.until)) return null;
    return { kind: view.notice, limit: view.limit, max: view.max, until: view.until };
  }
  if (view.notice !== "log_invalid") return null;
  if (!Number.isSafeInteger(view.seq) || view.seq < 0) return null;
  return { kind: view.notice, seq: view.seq, reason: view.reason };
}

function lateness(reminder) {
  if (reminder.deliveredAt === null) return 0;
  return Date.parse(reminder.deliveredAt) - Date.parse(reminder.occurrenceAt);
}


function rawJson(view) {
  try {
    const text = JSON.stringify(view, null, 2);
    return text === undefined ? String(view) : text;
  } catch {
    return "[unserializable view]";
  }
}

