// dsh-client-ui-schedule: the browser renderer for dsh-tool-schedule's durable events.
//
// Contract: `register(registry)` registers two renderers:
//   "schedule/change" — the receipt of a delivered reminder occurrence. Its view (from the
//     host) is {scheduleId, prompt, occurrenceAt, deliveryMode: "session-local"} plus, from
//     protocol v2 on, {deliveredAt, missed, rule, ruleText, timeZone, revision}.
//   "schedule/notice" — a schedule log the plugin rejected: {notice: "log_invalid", seq,
//     reason, deliveryMode}.
// `render(view, event, ctx)` returns one DOM node and never throws for a bad view:
//   ctx   {document?, lang?: "en" | "zh", locale?, timeZone?}; `document` defaults to the
//         global one, `locale`/`timeZone` default to the reader's own.
// The node depends only on (view, ctx), so the registry may re-render it when the UI
// language changes. Every piece of text goes through `textContent`: prompts and reasons are
// model or user text and must never become markup.
//
// The reminder card shows the prompt, the occurrence in the reader's zone, the rule in words
// (English or 中文, from the `rule` object; the reminder's own zone is named when it is not
// the reader's), "overdue by …" when the delivery came a minute or more after the
// occurrence, how many earlier occurrences it stands for, the id and the session-local badge
// (仅限本会话 — the one Chinese term for "session-local" everywhere).

export const EVENT_TYPE = "schedule/change";
export const NOTICE_TYPE = "schedule/notice";
/** A delivery at least this late (ms) says "overdue by …" on the card. */
export const OVERDUE_AFTER_MS = 60_000;

const LABELS = Object.freeze({
  en: Object.freeze({
    reminder: "Reminder",
    sessionLocal: "session-local",
    sessionLocalHint: "Delivered only while this session is live",
    unreadable: "Reminder (unreadable)",
    timeHint: "UTC: ",
    overdue: (duration) => `overdue by ${duration}`,
    missed: (count) => `stands for ${count} missed ${count === 1 ? "occurrence" : "occurrences"}`,
    stopped: "Reminders stopped",
    noticeBody: (seq, reason) =>
      `The reminder log of this session is invalid at event ${seq}: ${reason}. ` +
      "Reminders set before it are still listed, but none of them will be delivered.",
  }),
  zh: Object.freeze({
    reminder: "提醒",
    sessionLocal: "仅限本会话",
    sessionLocalHint: "仅在本会话运行时送达",
    unreadable: "提醒（无法显示）",
    timeHint: "UTC: ",
    overdue: (duration) => `晚了 ${duration}`,
    missed: (count) => `含错过的 ${count} 次`,
    stopped: "提醒已停止",
    noticeBody: (seq, reason) =>
      `本会话的提醒记录在第 ${seq} 个事件处无效：${reason}。` +
      "之前设置的提醒仍会列出，但都不会再送达。",
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
  badge: {
    display: "inline-block",
    padding: "0 0.45em",
    border: "1px solid currentColor",
    borderRadius: "999px",
    fontSize: "0.9em",
  },
  raw: {
    margin: "0.2em 0 0",
    fontSize: "0.85em",
    whiteSpace: "pre-wrap",
    overflowWrap: "anywhere",
    opacity: "0.8",
  },
});

const TIME_FORMAT = Object.freeze({
  year: "numeric",
  month: "short",
  day: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
  timeZoneName: "short",
});

/** Register both renderers with the client's event-view registry. */
export function register(registry) {
  registry.register(EVENT_TYPE, renderScheduleReminder);
  registry.register(NOTICE_TYPE, renderScheduleNotice);
}

/** Render one reminder receipt; a malformed view yields the fallback row. */
export function renderScheduleReminder(view, event, ctx) {
  const { make, lang, options } = setUp(ctx);
  const reminder = readView(view);
  if (reminder === null) return fallbackRow(make, lang, view);
  return reminderRow(make, lang, reminder, options);
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
  row.setAttribute("data-notice-seq", String(notice.seq));
  const body = make("div", "dsh-schedule-body", STYLES.body);
  const label = make("span", "dsh-schedule-label", STYLES.label);
  body.appendChild(translated(label, lang, labels.stopped));
  const text = make("div", "dsh-schedule-meta", STYLES.meta);
  translated(text, lang, labels.noticeBody(notice.seq, notice.reason));
  body.appendChild(text);
  const icon = make("span", "dsh-schedule-bell", STYLES.bell, "⚠️");
  icon.setAttribute("aria-hidden", "true");
  row.appendChild(icon);
  row.appendChild(body);
  return row;
}

function setUp(ctx) {
  const options = ctx ?? {};
  const doc = options.document ?? globalThis.document;
  if (!doc || typeof doc.createElement !== "function") {
    throw new TypeError("schedule-reminder: no document to render into (pass ctx.document)");
  }
  return { make: elementFactory(doc), lang: uiLanguage(options.lang), options };
}

function reminderRow(make, lang, reminder, options) {
  const labels = LABELS[lang];
  const row = make("div", "dsh-schedule-reminder", STYLES.row);
  row.setAttribute("data-role", "schedule-reminder");
  row.setAttribute("data-schedule-id", reminder.scheduleId);

  const body = make("div", "dsh-schedule-body", STYLES.body);
  const heading = make("div", "dsh-schedule-heading", STYLES.heading);
  const label = make("span", "dsh-schedule-label", STYLES.label);
  heading.appendChild(translated(label, lang, labels.reminder));
  heading.appendChild(make("strong", "dsh-schedule-prompt", STYLES.prompt, reminder.prompt));

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
  const badge = make("span", "dsh-schedule-badge", STYLES.badge);
  translated(badge, lang, labels.sessionLocal);
  badge.setAttribute("title", labels.sessionLocalHint);
  meta.appendChild(separator(make));
  meta.appendChild(make("code", "dsh-schedule-id", STYLES.id, reminder.scheduleId));
  meta.appendChild(separator(make));
  meta.appendChild(badge);

  body.appendChild(heading);
  body.appendChild(meta);
  row.appendChild(bell(make));
  row.appendChild(body);
  return row;
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
function readView(view) {
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
  };
}

function readNotice(view) {
  if (!isObject(view) || view.notice !== "log_invalid") return null;
  if (!Number.isSafeInteger(view.seq) || view.seq < 0) return null;
  if (typeof view.reason !== "string" || view.reason.trim() === "") return null;
  return { seq: view.seq, reason: view.reason };
}

function isObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// The host always sends `toISOString()` form; anything else (another format, an
// impossible date that Date.parse would roll over) is not a view we understand.
function isCanonicalInstant(value) {
  if (typeof value !== "string") return false;
  const ms = Date.parse(value);
  return Number.isFinite(ms) && new Date(ms).toISOString() === value;
}

function lateness(reminder) {
  if (reminder.deliveredAt === null) return 0;
  return Date.parse(reminder.deliveredAt) - Date.parse(reminder.occurrenceAt);
}

// -- the rule in words ------------------------------------------------------------------

const DAY_NAMES = Object.freeze({
  en: ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"],
  zh: ["周日", "周一", "周二", "周三", "周四", "周五", "周六"],
});
const DAY_NUMBERS = Object.freeze({ SUN: 0, MON: 1, TUE: 2, WED: 3, THU: 4, FRI: 5, SAT: 6 });
const NUMBER = /^[0-9]{1,2}$/;

/**
 * The rule in words, or null when the view has none. `after` and `at` read as "Once";
 * `every` by its interval; `cron` by its usual shapes (daily, weekdays, some days of the
 * week, monthly, every N minutes or hours), else the host's English words (or the
 * expression itself in Chinese). A wall-time rule names its zone when the reader is
 * elsewhere.
 */
export function ruleWords(reminder, lang, options = {}) {
  const rule = reminder.rule;
  if (rule === null) return null;
  const zh = lang === "zh";
  if (rule.kind === "after" || rule.kind === "at") return zh ? "一次" : "Once";
  if (rule.kind === "every" && Number.isSafeInteger(rule.seconds) && rule.seconds > 0) {
    const interval = spellSeconds(rule.seconds, lang);
    return zh ? `每 ${interval}` : `Every ${interval}`;
  }
  if (rule.kind !== "cron" || typeof rule.cron !== "string") return null;
  const words = cronWords(rule.cron, lang);
  if (words !== null) return words + zoneNote(reminder.timeZone, options);
  if (zh) return `按 cron 计划“${rule.cron}”${zoneNote(reminder.timeZone, options)}`;
  // The host's words already name the zone.
  if (reminder.ruleText !== null) return capitalize(reminder.ruleText);
  return `On the cron schedule “${rule.cron}”${zoneNote(reminder.timeZone, options)}`;
}

function cronWords(expression, lang) {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5) return null;
  const [minute, hour, dom, month, dow] = fields;
  const zh = lang === "zh";
  if (month !== "*") return null;
  const step = (field) => /^\*\/([0-9]{1,2})$/.exec(field)?.[1];
  if (step(minute) && hour === "*" && dom === "*" && dow === "*") {
    const n = Number(step(minute));
    return zh ? `每 ${n} 分钟` : `Every ${n} minute${n === 1 ? "" : "s"}`;
  }
  if (NUMBER.test(minute) && step(hour) && dom === "*" && dow === "*") {
    const n = Number(step(hour));
    const at = Number(minute);
    const unit = n === 1 ? "hour" : "hours";
    return zh ? `每 ${n} 小时（第 ${at} 分）` : `Every ${n} ${unit} at minute ${at}`;
  }
  if (!NUMBER.test(minute) || !NUMBER.test(hour)) return null;
  const clock = `${hour.padStart(2, "0")}:${minute.padStart(2, "0")}`;
  if (dom === "*" && dow === "*") return zh ? `每天 ${clock}` : `Every day at ${clock}`;
  if (NUMBER.test(dom) && dow === "*") {
    return zh ? `每月 ${Number(dom)} 日 ${clock}` : `Monthly on day ${Number(dom)} at ${clock}`;
  }
  if (dom !== "*") return null;
  const days = weekdays(dow);
  if (days === null) return null;
  const names = DAY_NAMES[lang];
  if (days.join() === "1,2,3,4,5") {
    return zh ? `每个工作日 ${clock}` : `Every weekday at ${clock}`;
  }
  if (days.join() === "0,6") return zh ? `每个周末 ${clock}` : `Every weekend at ${clock}`;
  const list = days.map((day) => names[day]);
  return zh ? `每${list.join("、")} ${clock}` : `Every ${list.join(", ")} at ${clock}`;
}

/** Sorted day numbers (0 = Sunday) of a day-of-week field of names, numbers and ranges. */
function weekdays(field) {
  const days = new Set();
  for (const part of field.toUpperCase().split(",")) {
    const [first, last = first] = part.split("-");
    const start = dayNumber(first);
    const end = dayNumber(last);
    if (start === null || end === null || end < start) return null;
    for (let day = start; day <= end; day += 1) days.add(day % 7);
  }
  return [...days].sort((a, b) => a - b);
}

function dayNumber(text) {
  if (text in DAY_NUMBERS) return DAY_NUMBERS[text];
  return /^[0-7]$/.test(text) ? Number(text) : null;
}

function zoneNote(zone, options) {
  if (zone === null) return "";
  let reader = options.timeZone;
  if (typeof reader !== "string") {
    reader = new Intl.DateTimeFormat().resolvedOptions().timeZone;
  }
  return zone === reader ? "" : ` (${zone})`;
}

function capitalize(text) {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

// -- durations ------------------------------------------------------------------------------

const UNITS = Object.freeze({
  en: [
    [86_400, "day", "days"],
    [3_600, "hour", "hours"],
    [60, "minute", "minutes"],
    [1, "second", "seconds"],
  ],
  zh: [
    [86_400, "天", "天"],
    [3_600, "小时", "小时"],
    [60, "分钟", "分钟"],
    [1, "秒", "秒"],
  ],
});

/** Whole seconds in at most two units: "2 hours", "1 minute 30 seconds", "3 天 4 小时". */
export function spellSeconds(seconds, lang) {
  const parts = [];
  let rest = Math.max(0, Math.floor(seconds));
  for (const [size, one, many] of UNITS[lang === "zh" ? "zh" : "en"]) {
    const amount = Math.floor(rest / size);
    rest -= amount * size;
    if (amount > 0 && parts.length < 2) parts.push(`${amount} ${amount === 1 ? one : many}`);
  }
  return parts.join(" ") || (lang === "zh" ? "0 秒" : "0 seconds");
}

function spellDuration(ms, lang) {
  return spellSeconds(Math.floor(ms / 1000), lang);
}

// -- time and DOM helpers ------------------------------------------------------------------

function uiLanguage(lang) {
  return typeof lang === "string" && lang.toLowerCase().startsWith("zh") ? "zh" : "en";
}

function localTime(iso, lang, options) {
  try {
    const format = new Intl.DateTimeFormat(readerLocale(lang, options), {
      ...TIME_FORMAT,
      timeZone: typeof options.timeZone === "string" ? options.timeZone : undefined,
    });
    return format.format(new Date(iso));
  } catch {
    // An unsupported locale or zone must not cost the reader the receipt.
    return iso;
  }
}

// The reader's own regional variant of the UI language when they have one
// (en-GB, zh-TW, ...), otherwise the UI language itself, so the date reads in
// the same language as the labels around it.
function readerLocale(lang, options) {
  if (typeof options.locale === "string" && options.locale !== "") return options.locale;
  const preferred = globalThis.navigator?.languages;
  const candidates = [
    ...(Array.isArray(preferred) ? preferred : []),
    new Intl.DateTimeFormat().resolvedOptions().locale,
    lang === "zh" ? "zh-CN" : "en",
  ];
  return candidates.find((tag) => primaryLanguage(tag) === lang);
}

function primaryLanguage(tag) {
  return String(tag).split("-")[0].toLowerCase();
}

function rawJson(view) {
  try {
    const text = JSON.stringify(view, null, 2);
    return text === undefined ? String(view) : text;
  } catch {
    return "[unserializable view]";
  }
}

function elementFactory(doc) {
  return function make(tag, className, styles, text) {
    const element = doc.createElement(tag);
    element.setAttribute("class", className);
    if (styles && element.style) {
      for (const [property, value] of Object.entries(styles)) element.style[property] = value;
    }
    if (text !== undefined) element.textContent = text;
    return element;
  };
}

function translated(element, lang, text) {
  element.setAttribute("lang", lang);
  element.textContent = text;
  return element;
}

function bell(make) {
  const icon = make("span", "dsh-schedule-bell", STYLES.bell, "🔔");
  icon.setAttribute("aria-hidden", "true");
  return icon;
}

function separator(make) {
  const dot = make("span", "dsh-schedule-separator", null, " · ");
  dot.setAttribute("aria-hidden", "true");
  return dot;
}
