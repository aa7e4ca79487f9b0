// dsh-client-ui-schedule: the words of reminders, in English and 中文 — the rule
// in words, durations, times in the reader's zone and countdowns — shared by
// the receipt card, the panel, the list status and the notification. Pure:
// no DOM, no globals beyond Intl (and the navigator's languages, for the
// reader's own regional variant of the UI language).

/** "en" or "zh" for any language tag; unknown tags read as English. */
export function uiLanguage(lang) {
  return typeof lang === "string" && lang.toLowerCase().startsWith("zh") ? "zh" : "en";
}

export function isObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// The host always sends `toISOString()` form; anything else (another format, an
// impossible date that Date.parse would roll over) is not a time we understand.
export function isCanonicalInstant(value) {
  if (typeof value !== "string") return false;
  const ms = Date.parse(value);
  return Number.isFinite(ms) && new Date(ms).toISOString() === value;
}

// -- what the running setup does ------------------------------------------------------

/**
 * Whether a closed conversation's reminders fire, in words: the host wakes
 * closed conversations (`firesWhenClosed`, the default setup), or reminders
 * fire only while their conversation is open (the design note's setup).
 */
export const FIRES = Object.freeze({
  en: Object.freeze({
    whenClosed: "Fires even when this conversation is closed",
    whileOpen: "Fires only while this conversation is open",
  }),
  zh: Object.freeze({
    whenClosed: "即使此对话已关闭也会触发",
    whileOpen: "只在此对话打开时触发",
  }),
});

/** The words of `FIRES` for a setup that does (true) or does not (false) fire while closed. */
export function firesWords(firesWhenClosed, lang) {
  const words = FIRES[uiLanguage(lang)];
  return firesWhenClosed === true ? words.whenClosed : words.whileOpen;
}

// -- a tool that failed ---------------------------------------------------------------------

/** What did not happen when one of dsh-tool-schedule's tools failed, by language. */
export const TOOL_ERRORS = Object.freeze({
  en: Object.freeze({
    schedule_create: "The reminder could not be set",
    schedule_update: "The reminder could not be changed",
    schedule_delete: "The reminder could not be deleted",
    schedule_list: "The reminders could not be listed",
  }),
  zh: Object.freeze({
    schedule_create: "没能设置提醒",
    schedule_update: "没能修改提醒",
    schedule_delete: "没能删除提醒",
    schedule_list: "没能列出提醒",
  }),
});

/**
 * The words of a failed call of `tool` (registry.registerToolError): "The
 * reminder could not be set: <message>", in the reader's language; null for
 * a tool that is not ours.
 */
export function toolErrorWords(tool, error, ctx = {}) {
  const lang = uiLanguage(ctx.lang);
  const lead = TOOL_ERRORS[lang][tool];
  if (lead === undefined) return null;
  const message = typeof error?.message === "string" ? error.message.trim() : "";
  if (message === "") return lang === "zh" ? `${lead}。` : `${lead}.`;
  return lang === "zh" ? `${lead}：${message}` : `${lead}: ${message}`;
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

/** Milliseconds in words, whole seconds, at most two units. */
export function spellDuration(ms, lang) {
  return spellSeconds(Math.floor(ms / 1000), lang);
}

// -- times ----------------------------------------------------------------------------------

const FULL_TIME = Object.freeze({
  year: "numeric",
  month: "short",
  day: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
  timeZoneName: "short",
});

/**
 * `iso` in the reader's zone (`options.timeZone`, else their own) and locale:
 * date, time with seconds and the zone's short name. Falls back to the ISO
 * text when the zone or locale is not supported.
 */
export function localTime(iso, lang, options = {}) {
  return format(iso, lang, options, FULL_TIME) ?? iso;
}

/**
 * When `iso` is, for a list: "14:35" today, "Tomorrow 09:00" / "明天 09:00",
 * else "Mon 5 Jan 08:30" — in the reader's zone, relative to `now` (ms).
 */
export function shortWhen(iso, lang, options = {}, now = Date.now()) {
  const ms = Date.parse(iso);
  const clock = format(iso, lang, options, { hour: "2-digit", minute: "2-digit" }) ?? iso;
  const day = dayKey(ms, options);
  if (day === dayKey(now, options)) return clock;
  if (day === dayKey(now + 86_400_000, options)) return lang === "zh" ? `明天 ${clock}` : `Tomorrow ${clock}`;
  if (day === dayKey(now - 86_400_000, options)) return lang === "zh" ? `昨天 ${clock}` : `Yesterday ${clock}`;
  const date = format(iso, lang, options, { weekday: "short", month: "short", day: "numeric" });
  return date === null ? clock : `${date} ${clock}`;
}

function dayKey(ms, options) {
  return format(new Date(ms).toISOString(), "en", { ...options, locale: "en-CA" }, {
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
  });
}

function format(iso, lang, options, fields) {
  try {
    const formatter = new Intl.DateTimeFormat(readerLocale(lang, options), {
      ...fields,
      timeZone: typeof options.timeZone === "string" ? options.timeZone : undefined,
    });
    return formatter.format(new Date(iso));
  } catch {
    // An unsupported locale or zone must not cost the reader the reminder.
    return null;
  }
}

// The reader's own regional variant of the UI language when they have one
// (en-GB, zh-TW, ...), otherwise the UI language itself, so the date reads in
// the same language as the labels around it.
export function readerLocale(lang, options = {}) {
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

// -- countdowns -----------------------------------------------------------------------------

/**
 * How far `iso` is from `now`, as a countdown: "in 4:59" under an hour
 * ("4:59 后"), "in 3 h 05 min" under a day ("3 小时 05 分后"), else "in 2 days"
 * ("2 天后"); a time that passed is "due now" ("已到时间") for its first
 * minute, then "overdue by 5 minutes" ("晚了 5 分钟").
 */
export function countdown(iso, now, lang) {
  const zh = lang === "zh";
  const left = Math.ceil((Date.parse(iso) - now) / 1000);
  if (!Number.isFinite(left)) return "";
  if (left <= 0) {
    const late = -left;
    if (late < 60) return zh ? "已到时间" : "due now";
    return zh ? `晚了 ${spellSeconds(late, "zh")}` : `overdue by ${spellSeconds(late, "en")}`;
  }
  if (left < 3600) {
    const text = `${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}`;
    return zh ? `${text} 后` : `in ${text}`;
  }
  if (left < 86_400) {
    const hours = Math.floor(left / 3600);
    const minutes = String(Math.floor((left % 3600) / 60)).padStart(2, "0");
    return zh ? `${hours} 小时 ${minutes} 分后` : `in ${hours} h ${minutes} min`;
  }
  const days = Math.round(left / 86_400);
  return zh ? `${days} 天后` : `in ${days} ${days === 1 ? "day" : "days"}`;
}

/** Seconds until `iso` (negative once it passed), or NaN. */
export function secondsUntil(iso, now) {
  return (Date.parse(iso) - now) / 1000;
}
