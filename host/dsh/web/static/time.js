// Times as the reader reads them: in their own zone (or one injected for
// tests) and their own regional variant of the UI language. One formatter
// per use is built once and reused: Intl formatters are slow to create.

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;

/**
 * The locale for UI language `lang`: the reader's first preferred language
 * tag with the same primary language (en-GB, zh-TW, …), else a default.
 */
export function localeFor(lang, preferred = []) {
  const tags = Array.isArray(preferred) ? preferred : [];
  const match = tags.find((tag) => typeof tag === "string" && tag.toLowerCase().split("-")[0] === lang);
  return match ?? (lang === "zh" ? "zh-CN" : "en-US");
}

/**
 * Formatters for `locale` in `timeZone` (undefined: the reader's own; an
 * unknown zone falls back to it rather than failing).
 */
export function createTimeFormat({ locale, timeZone } = {}) {
  const zone = validZone(timeZone);
  const make = (loc, options) => {
    try {
      return new Intl.DateTimeFormat(loc, { ...options, timeZone: zone });
    } catch {
      return new Intl.DateTimeFormat(undefined, { ...options, timeZone: zone });
    }
  };
  const clock = make(locale, { hour: "2-digit", minute: "2-digit" });
  const full = make(locale, {
    weekday: "short",
    year: "numeric",
    month: "short",
    day: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    timeZoneName: "short",
  });
  const short = make(locale, { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
  const dayWithYear = make(locale, { weekday: "short", year: "numeric", month: "short", day: "numeric" });
  const dayThisYear = make(locale, { weekday: "short", month: "short", day: "numeric" });
  // en-CA formats a date as YYYY-MM-DD: a sortable key for "which day".
  const key = make("en-CA", { year: "numeric", month: "2-digit", day: "2-digit" });

  const dayKey = (ms) => key.format(ms);
  return Object.freeze({
    timeZone: zone,
    locale,
    /** "14:05" (or "2:05 PM"): the time of day. */
    clock: (ms) => clock.format(ms),
    /** "Dec 1, 14:05": a date and time in few characters. */
    short: (ms) => short.format(ms),
    /** Weekday, date, time with seconds and the zone's name. */
    full: (ms) => full.format(ms),
    /** "YYYY-MM-DD" of `ms` in the zone. */
    dayKey,
    /**
     * When something was last active, in words, relative to `now` (through
     * `t`): "active just now", "active 5 min ago", "active 3 h ago", then
     * "active Dec 1, 14:05". A time ahead of `now` (another clock) is "now".
     */
    ago(ms, now, t) {
      const past = now - ms;
      if (past < MINUTE_MS) return t("activeNow");
      if (past < HOUR_MS) return t("activeMinutes", { n: Math.floor(past / MINUTE_MS) });
      if (past < DAY_MS) return t("activeHours", { n: Math.floor(past / HOUR_MS) });
      return t("activeOn", { date: short.format(ms) });
    },
    /** "Today", "Yesterday" (through `t`) or the date, relative to `now`. */
    dayLabel(ms, now, t) {
      const day = dayKey(ms);
      const today = dayKey(now);
      if (day === today) return t("today");
      if (day === previousDay(today)) return t("yesterday");
      return (day.slice(0, 4) === today.slice(0, 4) ? dayThisYear : dayWithYear).format(ms);
    },
  });
}

/** The calendar day before "YYYY-MM-DD" (never off by a DST hour). */
export function previousDay(key) {
  const [year, month, day] = key.split("-").map(Number);
  return new Date(Date.UTC(year, month - 1, day) - DAY_MS).toISOString().slice(0, 10);
}

/** The reader's IANA zone, or undefined when the browser does not say. */
export function readerZone(intl = Intl) {
  try {
    const zone = intl.DateTimeFormat().resolvedOptions().timeZone;
    return typeof zone === "string" && zone !== "" ? zone : undefined;
  } catch {
    return undefined;
  }
}

function validZone(timeZone) {
  if (typeof timeZone !== "string" || timeZone === "") return undefined;
  try {
    new Intl.DateTimeFormat("en", { timeZone });
    return timeZone;
  } catch {
    return undefined;
  }
}
