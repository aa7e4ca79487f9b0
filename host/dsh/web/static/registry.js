// The event-view registry: which renderer draws the view of a durable event,
// keyed by the event's type. UI plugins fill it through `register(registry)`.

const EVENT_TYPE = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;

/**
 * Create a registry.
 *
 * `registry.register(eventType, render)`: `render(view, event, ctx)` must
 * return a DOM node; `ctx` is `{document, lang, t, seq, eventType}`. A type
 * is registered once; a second registration throws naming both owners.
 * `registry.lang()` is the current UI language ("en" or "zh"): renderers are
 * called again whenever it changes, so they should read it at render time.
 */
export function createRegistry({ lang = () => "en" } = {}) {
  const renderers = new Map();

  function register(eventType, render, owner = "host") {
    if (typeof eventType !== "string" || !EVENT_TYPE.test(eventType)) {
      throw new TypeError(
        `${owner}: registry.register expects an event type like "area/name", got ${String(eventType)}`,
      );
    }
    if (typeof render !== "function") {
      throw new TypeError(`${owner}: the renderer for ${eventType} must be a function`);
    }
    const existing = renderers.get(eventType);
    if (existing !== undefined) {
      throw new Error(`${owner}: ${eventType} already has a renderer from ${existing.owner}`);
    }
    renderers.set(eventType, { render, owner });
  }

  return Object.freeze({
    register: (eventType, render) => register(eventType, render),
    /** The renderer for `eventType`, or undefined. */
    lookup: (eventType) => renderers.get(eventType)?.render,
    /** The owner that registered `eventType` ("host" or a plugin name), or undefined. */
    ownerOf: (eventType) => renderers.get(eventType)?.owner,
    types: () => [...renderers.keys()],
    lang: () => lang(),
    /** The same registry, but registrations are stamped with `plugin` in errors. */
    forPlugin: (plugin) =>
      Object.freeze({
        register: (eventType, render) => register(eventType, render, String(plugin)),
        lang: () => lang(),
      }),
  });
}
