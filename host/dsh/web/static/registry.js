// The client registry: what UI plugins contribute to the page, filled through
// each plugin module's `register(registry)`.
//
// - event views: which renderer draws the view of a durable event, by type;
// - panels: a box of the open Session's plugin state above the transcript
//   (the reminders panel), mounted once per opened Session;
// - alerts: which newly delivered events deserve the reader's attention when
//   they are not looking (tab title count, a system notification, a sound);
// - statuses: a short line about a Session from a plugin's state, shown in
//   the Session list and the header ("1 reminder waiting");
// - tool errors: a plugin's words for a failed call of one of its tools
//   ("The reminder could not be set: …"), in the reader's language.

const EVENT_TYPE = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/**
 * Create a registry.
 *
 * `registry.register(eventType, render)`: `render(view, event, ctx)` must
 * return a DOM node; `ctx` is `{document, lang, t, seq, eventType, time,
 * timeZone, locale, followup}` (`followup`: see README "Write a plugin"),
 * and, on hosts of the third edition while a Session is shown, also
 * `sessionId`, `act(plugin, action, args)` (a plugin action on that Session
 * through the actions API: resolves to its result, rejects with the host's
 * ApiError; a closed Session is opened for it), `markRead(throughSeq)` (its
 * alerts up to that seq are read: resolves to `{unread}`, rejects on
 * failure), `pluginState(plugin)` (that plugin's state of the Session, or
 * undefined) and `onError(err)` (tell the host about a failure the card
 * already words). A renderer must work without them (an older host): it
 * then offers no actions. The element it returns is kept while the event's
 * node is unchanged, so a renderer may update it in place later (an action's
 * outcome).
 *
 * `registry.registerPanel(id, panel)`: `panel.mount(host)` returns `{element,
 * update(props), destroy?()}`; `host` is `{document, act(plugin, action,
 * args), resume(), onError(err), storage: {get(key), set(key, value)},
 * matches(query)}` (`matches`: whether a CSS media query matches, e.g. a
 * phone's "(max-width: 600px)");
 * `update` is called with `{sessionId, live,
 * states, lang, timeZone, locale, now}` whenever any of them changes and
 * once a second. `panel.order` (a number, default 0) sorts panels.
 *
 * `registry.registerAlert(eventType, describe)`: `describe(view, ctx)` returns
 * `{title, body?}` for a newly delivered event of that type, or null.
 *
 * `registry.registerStatus(plugin, describe)`: `describe(state, ctx)` reads
 * plugin `plugin`'s state of a Session (or its list summary: `ctx.kind` is
 * "state" or "summary") and returns `{text, tone?}` or null; `ctx` is
 * `{lang, live, now}`.
 *
 * `registry.registerToolError(tool, describe)`: `describe(error, ctx)` words
 * a failed call of tool `tool` (`error` is `{code, message}`, `ctx` is
 * `{lang}`) as one sentence for the person, or returns null for the host's
 * own words. The code stays available to developers beside it.
 *
 * Each id, event type or plugin is registered once per kind; a second
 * registration throws naming both owners. `registry.lang()` is the current UI
 * language ("en" or "zh"): renderers are called again whenever it changes.
 */
export function createRegistry({ lang = () => "en" } = {}) {
  const renderers = new Map();
  const panels = new Map();
  const alerts = new Map();
  const statuses = new Map();
  const toolErrors = new Map();

  function claim(table, kind, key, value, owner) {
    const existing = table.get(key);
    if (existing !== undefined) {
      throw new Error(`${owner}: ${kind} ${key} is already registered by ${existing.owner}`);
    }
    table.set(key, { ...value, owner });
  }

  function register(eventType, render, owner = "host") {
    checkType(eventType, "registry.register", owner);
    if (typeof render !== "function") {
      throw new TypeError(`${owner}: the renderer for ${eventType} must be a function`);
    }
    const existing = renderers.get(eventType);
    if (existing !== undefined) {
      throw new Error(`${owner}: ${eventType} already has a renderer from ${existing.owner}`);
    }
    renderers.set(eventType, { render, owner });
  }

  function registerPanel(id, panel, owner = "host") {
    checkName(id, "registry.registerPanel", "a panel id", owner);
    if (panel === null || typeof panel !== "object" || typeof panel.mount !== "function") {
      throw new TypeError(`${owner}: panel ${id} must be an object with mount(host)`);
    }
    const order = Number.isFinite(panel.order) ? panel.order : 0;
    claim(panels, "panel", id, { id, mount: panel.mount, order }, owner);
  }

  function registerAlert(eventType, describe, owner = "host") {
    checkType(eventType, "registry.registerAlert", owner);
    if (typeof describe !== "function") {
      throw new TypeError(`${owner}: the alert for ${eventType} must be a function`);
    }
    claim(alerts, "the alert of", eventType, { describe }, owner);
  }

  function registerStatus(plugin, describe, owner = "host") {
    checkName(plugin, "registry.registerStatus", "a plugin name", owner);
    if (typeof describe !== "function") {
      throw new TypeError(`${owner}: the status for ${plugin} must be a function`);
    }
    claim(statuses, "the status of", plugin, { plugin, describe }, owner);
  }

  function registerToolError(tool, describe, owner = "host") {
    checkName(tool, "registry.registerToolError", "a tool name", owner);
    if (typeof describe !== "function") {
      throw new TypeError(`${owner}: the error words for ${tool} must be a function`);
    }
    claim(toolErrors, "the error words of", tool, { describe }, owner);
  }

  const contribute = (owner) => ({
    register: (eventType, render) => register(eventType, render, owner),
    registerPanel: (id, panel) => registerPanel(id, panel, owner),
    registerAlert: (eventType, describe) => registerAlert(eventType, describe, owner),
    registerStatus: (plugin, describe) => registerStatus(plugin, describe, owner),
    registerToolError: (tool, describe) => registerToolError(tool, describe, owner),
    lang: () => lang(),
  });

  return Object.freeze({
    ...contribute("host"),
    /** The renderer for `eventType`, or undefined. */
    lookup: (eventType) => renderers.get(eventType)?.render,
    /** The owner that registered `eventType` ("host" or a plugin name), or undefined. */
    ownerOf: (eventType) => renderers.get(eventType)?.owner,
    types: () => [...renderers.keys()],
    /** The panels, sorted by `order` then id: `[{id, owner, order, mount}]`. */
    panels: () => [...panels.values()].sort((a, b) => a.order - b.order || a.id.localeCompare(b.id)),
    /** The alert describer of `eventType`, or undefined. */
    alertFor: (eventType) => alerts.get(eventType)?.describe,
    /** The status describers: `[{plugin, owner, describe}]`. */
    statuses: () => [...statuses.values()],
    /** The error words of tool `tool`, or undefined. */
    toolErrorFor: (tool) => toolErrors.get(tool)?.describe,
    /** The same registry, but registrations are stamped with `plugin` in errors. */
    forPlugin: (plugin) => Object.freeze(contribute(String(plugin))),
  });
}

function checkType(eventType, method, owner) {
  if (typeof eventType !== "string" || !EVENT_TYPE.test(eventType)) {
    throw new TypeError(`${owner}: ${method} expects an event type like "area/name", got ${String(eventType)}`);
  }
}

function checkName(name, method, what, owner) {
  if (typeof name !== "string" || !NAME.test(name)) {
    throw new TypeError(`${owner}: ${method} expects ${what} like "reminders", got ${String(name)}`);
  }
}
