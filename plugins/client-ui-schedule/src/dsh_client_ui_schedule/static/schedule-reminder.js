// dsh-client-ui-schedule: the browser renderer for `schedule/change` reminder receipts.
//
// Contract: `register(registry)` calls `registry.register("schedule/change", render)`.
// `render(view, event, ctx)` returns one DOM node and never throws for a bad view:
//   view  {scheduleId, prompt, occurrenceAt, deliveryMode: "session-local"} from the host
//   ctx   {document?, lang?: "en" | "zh", locale?, timeZone?}; `document` defaults to the
//         global one, `locale`/`timeZone` default to the reader's own.
// The node depends only on (view, ctx), so the registry may re-render it when the UI
// language changes. Every piece of text goes through `textContent`: prompts are model or
// user text and must never become markup.

export const EVENT_TYPE = "schedule/change";

const LABELS = Object.freeze({
  en: Object.freeze({
    reminder: "Reminder",
    sessionLocal: "session-local",
    sessionLocalHint: "Delivered only while this session is live",
    unreadable: "Reminder (unreadable)",
    timeHint: "UTC: ",
  }),
  zh: Object.freeze({
    reminder: "提醒",
    sessionLocal: "仅限本会话",
    sessionLocalHint: "仅在本会话运行时送达",
    unreadable: "提醒（无法显示）",
    timeHint: "UTC: ",
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

/** Register the reminder renderer with the client's event-view registry. */
export function register(registry) {
  registry.register(EVENT_TYPE, renderScheduleReminder);
}

/** Render one reminder receipt; a malformed view yields the fallback row. */
export function renderScheduleReminder(view, event, ctx) {
  const options = ctx ?? {};
  const doc = options.document ?? globalThis.document;
  if (!doc || typeof doc.createElement !== "function") {
    throw new TypeError("schedule-reminder: no document to render into (pass ctx.document)");
  }
  const lang = uiLanguage(options.lang);
  const make = elementFactory(doc);
  const reminder = readView(view);
  if (reminder === null) return fallbackRow(make, lang, view);
  return reminderRow(make, lang, reminder, options);
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
  const badge = make("span", "dsh-schedule-badge", STYLES.badge);
  translated(badge, lang, labels.sessionLocal);
  badge.setAttribute("title", labels.sessionLocalHint);
  meta.appendChild(time);
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

/** The view's fields, or null when any is missing or of the wrong shape. */
function readView(view) {
  if (typeof view !== "object" || view === null || Array.isArray(view)) return null;
  const { scheduleId, prompt, occurrenceAt, deliveryMode } = view;
  if (typeof scheduleId !== "string" || scheduleId.trim() === "") return null;
  if (typeof prompt !== "string" || prompt.trim() === "") return null;
  if (deliveryMode !== "session-local") return null;
  if (!isCanonicalInstant(occurrenceAt)) return null;
  return { scheduleId, prompt, occurrenceAt, deliveryMode };
}

// The host always sends `toISOString()` form; anything else (another format, an
// impossible date that Date.parse would roll over) is not a view we understand.
function isCanonicalInstant(value) {
  if (typeof value !== "string") return false;
  const ms = Date.parse(value);
  return Number.isFinite(ms) && new Date(ms).toISOString() === value;
}

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
