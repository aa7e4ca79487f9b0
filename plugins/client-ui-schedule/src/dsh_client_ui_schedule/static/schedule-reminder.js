// dsh-client-ui-schedule: the browser half of dsh reminders (the module the host
// imports; the others are its `ClientModule.imports`).
//
// `register(registry)` contributes, to the client registry:
//   "schedule/change" renderer — the receipt card of a delivered occurrence
//                                (schedule-card.js), with the follow-up the
//                                model was given folded inside it;
//   "schedule/notice" renderer — the warning card of a rejected reminder log;
//   panel "reminders"          — every active reminder of the open Session with
//                                its rule, next time, countdown and actions
//                                (schedule-panel.js);
//   status of "tool-schedule"  — "1 reminder waiting" for a cold Session in the
//                                list and the header (schedule-state.js);
//   alert of "schedule/change" — the notification of a delivered reminder.
// A host whose registry has no panels, statuses or alerts (an older dsh) still
// gets the cards. Everything is drawn from text, never from HTML.

import { renderScheduleNotice, renderScheduleReminder } from "./schedule-card.js";
import { PANEL_ID, reminderPanel } from "./schedule-panel.js";
import { STATE_PLUGIN, describeAlert, describeStatus } from "./schedule-state.js";

export { OVERDUE_AFTER_MS, readReceipt, renderScheduleNotice, renderScheduleReminder } from "./schedule-card.js";
export { PANEL_ID, ReminderPanel, SNOOZES, actionError, reminderPanel } from "./schedule-panel.js";
export { STATE_PLUGIN, describeAlert, describeStatus, isDue, readState } from "./schedule-state.js";
export { countdown, ruleWords, shortWhen, spellSeconds } from "./schedule-words.js";

export const EVENT_TYPE = "schedule/change";
export const NOTICE_TYPE = "schedule/notice";

/** Register the cards, the panel, the status and the alert with the client's registry. */
export function register(registry) {
  registry.register(EVENT_TYPE, renderScheduleReminder);
  registry.register(NOTICE_TYPE, renderScheduleNotice);
  registry.registerPanel?.(PANEL_ID, reminderPanel);
  registry.registerStatus?.(STATE_PLUGIN, describeStatus);
  registry.registerAlert?.(EVENT_TYPE, describeAlert);
}
