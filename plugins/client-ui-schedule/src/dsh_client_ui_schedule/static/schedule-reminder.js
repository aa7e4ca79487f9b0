// dsh-client-ui-schedule: the browser half of dsh reminders (the module the host
// imports; the others are its `ClientModule.imports`).
//
// `register(registry)` contributes, to the client registry:
//   "schedule/change" renderer — the receipt card of a delivered occurrence
//                                (schedule-card.js), with the follow-up the
//                                model was given folded inside it, and its
//                                Snooze / Done (schedule-after.js);
//   "schedule/snooze" renderer — the line a snooze leaves ("Snoozed “stretch”
//                                — again at 10:10"), which also marks the
//                                card it names as snoozed;
//   "schedule/notice" renderer — the warning card of a rejected reminder log;
//   panel "reminders"          — every active reminder of the open Session with
//                                its rule, next time, countdown and actions
//                                (schedule-panel.js);
//   status of "tool-schedule"  — "1 reminder waiting" for a cold Session in the
//                                list and the header (schedule-state.js);
//   alert of "schedule/change" — the notification of a delivered reminder;
//   error words of its tools    — "The reminder could not be set: …" for a
//                                failed schedule_create (and the others).
// A host whose registry has no panels, statuses or alerts (an older dsh) still
// gets the cards, and one whose renderers get no `act` / `markRead` gets them
// without buttons. Everything is drawn from text, never from HTML. What
// happened to cards after they fired is kept per registration (one page), in
// a FiredCards: no module-level state.

import { FiredCards, renderScheduleSnooze } from "./schedule-after.js";
import { renderScheduleNotice, renderScheduleReminder } from "./schedule-card.js";
import { PANEL_ID, reminderPanel } from "./schedule-panel.js";
import { STATE_PLUGIN, describeAlert, describeStatus } from "./schedule-state.js";
import { TOOL_ERRORS, toolErrorWords } from "./schedule-words.js";

export { AFTER_WORDS, CARD_SNOOZES, FiredCards, readSnooze, renderScheduleSnooze } from "./schedule-after.js";
export { LABELS, MISSED_CAP, OVERDUE_AFTER_MS, readReceipt, renderScheduleNotice, renderScheduleReminder } from "./schedule-card.js";
export { PANEL_ID, ReminderPanel, SNOOZES, WORDS, actionError, reminderPanel } from "./schedule-panel.js";
export { STATE_PLUGIN, STATUS, describeAlert, describeStatus, isDue, readState } from "./schedule-state.js";
export { FIRES, TOOL_ERRORS, countdown, firesWords, ruleWords, shortWhen, spellSeconds, toolErrorWords } from "./schedule-words.js";

export const EVENT_TYPE = "schedule/change";
export const NOTICE_TYPE = "schedule/notice";
export const SNOOZE_TYPE = "schedule/snooze";

/** Register the cards, the panel, the status and the alert with the client's registry. */
export function register(registry) {
  const fired = new FiredCards();
  registry.register(EVENT_TYPE, (view, event, ctx) => renderScheduleReminder(view, event, ctx, fired));
  registry.register(SNOOZE_TYPE, (view, event, ctx) => renderScheduleSnooze(view, event, ctx, fired));
  registry.register(NOTICE_TYPE, renderScheduleNotice);
  registry.registerPanel?.(PANEL_ID, reminderPanel);
  registry.registerStatus?.(STATE_PLUGIN, describeStatus);
  registry.registerAlert?.(EVENT_TYPE, describeAlert);
  for (const tool of Object.keys(TOOL_ERRORS.en)) {
    registry.registerToolError?.(tool, (error, ctx) => toolErrorWords(tool, error, ctx));
  }
}
