// dsh-client-ui-schedule: after a reminder fires — the card's Snooze and
// Done, and the line a snooze leaves in the transcript.
//
// On a host that gives renderers `act` and `markRead` (registry.js, third
// edition), each delivered reminder's card gets
//
//   [data-role=reminder-after]                 the card's actions:
//     [data-action=snooze][data-seconds=600]   "Snooze 10 min" (public hook),
//     [data-action=snooze][data-seconds=3600]  "Snooze 1 h" (public hook),
//     [data-action=done]                       "Done" (public hook),
//     [data-role=reminder-outcome]             what came of it, in words;
//
// and the card itself says `data-state="snoozed"` or `"done"`. Snooze asks
// dsh-tool-schedule for a new one-shot reminder linked to this occurrence
// (`snooze` with `{dispatchSeq, seconds}`: snoozing it twice gives the same
// reminder, so a retry or another tab cannot make two) and then marks the
// alert read, as Done does (`markRead(seq)`): both close its notifications
// on the reader's other devices. An older host gives neither: no buttons.
//
// What happened to a card outlives its element (the host draws cards again
// for another language, and a `schedule/snooze` line arrives after the card
// it names): `FiredCards` keeps it per page, keyed by Session and seq, and
// redraws the card on screen in place. Everything is text.

import { documentOf, elementFactory, translated, userText } from "./schedule-dom.js";
import { actionError } from "./schedule-panel.js";
import { STATE_PLUGIN } from "./schedule-state.js";
import { isCanonicalInstant, isObject, shortWhen, uiLanguage } from "./schedule-words.js";

/** The snoozes a delivered reminder offers, in seconds: 10 minutes and an hour. */
export const CARD_SNOOZES = Object.freeze([600, 3600]);

/** Every person-facing string of this module, by language. */
export const AFTER_WORDS = Object.freeze({
  en: Object.freeze({
    actions: "What to do with this reminder",
    snooze: { 600: "Snooze 10 min", 3600: "Snooze 1 h" },
    snoozeHint: { 600: "Remind me again in 10 minutes", 3600: "Remind me again in 1 hour" },
    done: "Done",
    doneHint: "Mark this reminder done (your other devices stop showing it too)",
    busy: "One moment…",
    snoozed: "Snoozed",
    snoozedUntil: (when) => `Snoozed — ${again(when)}`,
    wasDone: "Done ✓",
    line: "Snoozed",
    again,
    unreadable: "Snoozed reminder (unreadable)",
  }),
  zh: Object.freeze({
    actions: "如何处理这个提醒",
    snooze: { 600: "推迟 10 分钟", 3600: "推迟 1 小时" },
    snoozeHint: { 600: "10 分钟后再提醒我", 3600: "1 小时后再提醒我" },
    done: "完成",
    doneHint: "把这个提醒标为完成（你的其他设备也不再显示它）",
    busy: "请稍候…",
    snoozed: "已推迟",
    snoozedUntil: (when) => `已推迟——${when} 再提醒`,
    wasDone: "已完成 ✓",
    line: "已推迟",
    again: (when) => `${when} 再提醒`,
    unreadable: "已推迟的提醒（无法显示）",
  }),
});

function again(when) {
  // "again at 10:10", but "again Tomorrow 09:00" / "again Mon 5 Jan 08:30".
  return /^[0-9]/.test(when) ? `again at ${when}` : `again ${when}`;
}

/** The key of a card: its Session and its seq. */
export function firedKey(sessionId, seq) {
  return `${sessionId ?? ""}\u0000${seq}`;
}

/**
 * What happened to delivered reminders after they fired, for one page: per
 * card `{busy, snoozed: {id, nextAt} | null, done, error}`; the card on
 * screen (its `watch`er) is redrawn on every change.
 */
export class FiredCards {
  #states = new Map();
  #watchers = new Map();

  state(key) {
    return this.#states.get(key) ?? { busy: false, snoozed: null, done: false, error: null };
  }

  /** Merge `patch` into the state of `key` and redraw its card. */
  update(key, patch) {
    const next = { ...this.state(key), ...patch };
    this.#states.set(key, next);
    this.#watchers.get(key)?.draw(next);
  }

  /** The card now on screen for `key` (a newer drawing replaces an older one). */
  watch(key, watcher) {
    this.#watchers.set(key, watcher);
  }

  /** Put the keyboard on the card's outcome (its buttons are gone). */
  focus(key) {
    this.#watchers.get(key)?.focus();
  }
}

const STYLES = Object.freeze({
  box: { display: "flex", flexWrap: "wrap", alignItems: "center", gap: "0.4em", marginTop: "0.35em" },
  button: {
    padding: "0.15em 0.6em",
    border: "1px solid var(--dsh-schedule-border, rgba(127, 127, 127, 0.45))",
    borderRadius: "999px",
    background: "transparent",
    color: "inherit",
    font: "inherit",
    fontSize: "0.85em",
    cursor: "pointer",
  },
  outcome: { fontSize: "0.85em", fontWeight: "600", color: "" },
  error: { fontSize: "0.85em", fontWeight: "400", color: "var(--dsh-schedule-warning, #c0392b)" },
});

/**
 * The actions of a delivered reminder's card `row` (receipt `receipt`, drawn
 * with `ctx`), or null for a card the host gave no seq. Without actions
 * (an older host) it holds only the outcome, hidden until something is
 * known (a snooze line names the card).
 */
export function afterFiring(make, lang, row, receipt, ctx, fired) {
  const words = AFTER_WORDS[lang];
  const key = firedKey(ctx.sessionId, ctx.seq);
  // A history read says it was snoozed (`snoozedAs`) before any line does.
  if (receipt.snoozedAs !== null && fired.state(key).snoozed === null) {
    fired.update(key, { snoozed: { id: receipt.snoozedAs, nextAt: null } });
  }
  if (!Number.isSafeInteger(ctx.seq)) return null;
  const canAct = typeof ctx.act === "function" && typeof ctx.markRead === "function";
  const state = fired.state(key);

  const box = make("div", "dsh-schedule-after", STYLES.box);
  box.setAttribute("data-role", "reminder-after");
  box.setAttribute("role", "group");
  box.setAttribute("aria-label", words.actions);
  const outcome = make("span", "dsh-schedule-outcome", STYLES.outcome);
  outcome.setAttribute("data-role", "reminder-outcome");
  outcome.setAttribute("tabindex", "-1");
  const buttons = [];
  if (canAct) {
    for (const seconds of CARD_SNOOZES) {
      buttons.push(button(make, lang, words.snooze[seconds], words.snoozeHint[seconds], "snooze", seconds));
    }
    buttons.push(button(make, lang, words.done, words.doneHint, "done"));
  }
  for (const element of buttons) box.appendChild(element);
  box.appendChild(outcome);

  const options = { timeZone: ctx.timeZone ?? undefined, locale: ctx.locale ?? undefined };
  const draw = (now) => {
    row.setAttribute("data-state", now.snoozed !== null ? "snoozed" : now.done ? "done" : "delivered");
    const settled = now.snoozed !== null || now.done;
    for (const element of buttons) {
      if (settled) element.setAttribute("hidden", "");
      else element.removeAttribute("hidden");
      if (now.busy) element.setAttribute("disabled", "");
      else element.removeAttribute("disabled");
    }
    if (now.busy) box.setAttribute("aria-busy", "true");
    else box.removeAttribute("aria-busy");
    let text = "";
    if (now.error !== null) text = actionError(now.error, lang);
    else if (now.snoozed !== null) text = snoozedWords(now.snoozed, words, lang, options, receipt);
    else if (now.done) text = words.wasDone;
    else if (now.busy) text = words.busy;
    translated(outcome, lang, text);
    Object.assign(outcome.style ?? {}, now.error !== null ? STYLES.error : STYLES.outcome);
    outcome.setAttribute("role", now.error !== null ? "alert" : "status");
    if (text === "") outcome.setAttribute("hidden", "");
    else outcome.removeAttribute("hidden");
    if (text === "" && buttons.length === 0) box.setAttribute("hidden", "");
    else box.removeAttribute("hidden");
  };
  fired.watch(key, { draw, focus: () => outcome.focus?.() });
  draw(state);

  box.addEventListener("click", (event) => {
    const target = event.target?.closest?.("[data-action]");
    if (!target || target.hasAttribute("disabled") || fired.state(key).busy) return;
    const action = target.getAttribute("data-action");
    if (action === "snooze") snooze(ctx, fired, key, Number(target.getAttribute("data-seconds")));
    else if (action === "done") done(ctx, fired, key);
  });
  return box;
}

function button(make, lang, text, hint, action, seconds = null) {
  const element = make("button", `dsh-schedule-action dsh-schedule-${action}`, STYLES.button, text);
  element.setAttribute("type", "button");
  element.setAttribute("lang", lang);
  element.setAttribute("data-action", action);
  if (seconds !== null) element.setAttribute("data-seconds", String(seconds));
  element.setAttribute("title", hint);
  element.setAttribute("aria-label", hint);
  return element;
}

async function snooze(ctx, fired, key, seconds) {
  fired.update(key, { busy: true, error: null });
  let result;
  try {
    result = await ctx.act(STATE_PLUGIN, "snooze", { dispatchSeq: ctx.seq, seconds });
  } catch (err) {
    fired.update(key, { busy: false, error: err });
    ctx.onError?.(err);
    return;
  }
  const reminder = isObject(result?.reminder) ? result.reminder : {};
  fired.update(key, {
    busy: false,
    snoozed: {
      id: typeof reminder.id === "string" ? reminder.id : null,
      nextAt: isCanonicalInstant(reminder.nextAt) ? reminder.nextAt : null,
    },
  });
  fired.focus(key);
  // Snoozed is dealt with: its notifications elsewhere go, as for Done.
  ctx.markRead(ctx.seq).catch((err) => ctx.onError?.(err));
}

async function done(ctx, fired, key) {
  fired.update(key, { busy: true, error: null });
  try {
    await ctx.markRead(ctx.seq);
  } catch (err) {
    fired.update(key, { busy: false, error: err });
    ctx.onError?.(err);
    return;
  }
  fired.update(key, { busy: false, done: true });
  fired.focus(key);
}

/** "Snoozed — again at 10:10", relative to the day the reminder fired; "Snoozed" without a time. */
function snoozedWords(snoozed, words, lang, options, receipt) {
  if (snoozed.nextAt === null) return words.snoozed;
  const from = Date.parse(receipt.deliveredAt ?? receipt.occurrenceAt);
  return words.snoozedUntil(shortWhen(snoozed.nextAt, lang, options, from));
}

// -- the line of a snooze -----------------------------------------------------------------

/** The view of a `schedule/snooze` event (its sidecar), or null. */
export function readSnooze(view) {
  const snooze = isObject(view) ? view.snooze : null;
  if (!isObject(snooze)) return null;
  if (typeof snooze.id !== "string" || snooze.id === "") return null;
  if (!Number.isSafeInteger(snooze.dispatchSeq) || snooze.dispatchSeq < 0) return null;
  return {
    id: snooze.id,
    prompt: typeof snooze.prompt === "string" ? snooze.prompt : "",
    dispatchSeq: snooze.dispatchSeq,
    nextAt: isCanonicalInstant(snooze.nextAt) ? snooze.nextAt : null,
  };
}

/**
 * Draw a `schedule/snooze` line — "Snoozed “stretch” — again at 10:10" —
 * and tell the card it names (`dispatchSeq`) that it was snoozed.
 */
export function renderScheduleSnooze(view, event, ctx, fired = new FiredCards()) {
  const options = ctx ?? {};
  const make = elementFactory(documentOf(options));
  const lang = uiLanguage(options.lang);
  const words = AFTER_WORDS[lang];
  const snooze = readSnooze(view);
  const row = make("div", "dsh-schedule-reminder dsh-schedule-snooze", {
    display: "flex",
    gap: "0.5em",
    alignItems: "baseline",
    margin: "0.2em 0",
    fontSize: "0.9em",
    opacity: "0.85",
    overflowWrap: "anywhere",
  });
  row.setAttribute("data-role", "schedule-snooze");
  const icon = make("span", "dsh-schedule-bell", null, "⏰");
  icon.setAttribute("aria-hidden", "true");
  row.appendChild(icon);
  if (snooze === null) {
    row.appendChild(translated(make("span", "dsh-schedule-label"), lang, words.unreadable));
    return row;
  }
  row.setAttribute("data-dispatch-seq", String(snooze.dispatchSeq));
  row.setAttribute("data-schedule-id", snooze.id);
  const text = make("span", "dsh-schedule-body");
  text.appendChild(translated(make("span", "dsh-schedule-label"), lang, `${words.line} `));
  text.appendChild(userText(make("strong", "dsh-schedule-prompt", { whiteSpace: "pre-wrap" }, `“${snooze.prompt}”`)));
  if (snooze.nextAt !== null) {
    const at = make("time", "dsh-schedule-time");
    at.setAttribute("datetime", snooze.nextAt);
    const from = Number.isFinite(event?.time) ? event.time : Date.parse(snooze.nextAt);
    const when = shortWhen(snooze.nextAt, lang, { timeZone: options.timeZone ?? undefined, locale: options.locale ?? undefined }, from);
    translated(at, lang, words.again(when));
    text.appendChild(dash(make));
    text.appendChild(at);
  }
  row.appendChild(text);
  fired.update(firedKey(options.sessionId, snooze.dispatchSeq), { snoozed: { id: snooze.id, nextAt: snooze.nextAt } });
  return row;
}

function dash(make) {
  const span = make("span", "dsh-schedule-separator", null, " — ");
  span.setAttribute("aria-hidden", "true");
  return span;
}
