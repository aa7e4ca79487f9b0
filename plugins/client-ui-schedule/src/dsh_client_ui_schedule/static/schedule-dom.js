// dsh-client-ui-schedule: the one way its modules build DOM — elements from
// `createElement`, text through `textContent`, styles set property by
// property. Nothing parses HTML: prompts are the model's or the person's text.

/** A `make(tag, className, styles?, text?)` for `doc`. */
export function elementFactory(doc) {
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

/**
 * Mark `element` as the person's or the model's text (a prompt): its own
 * direction, isolated from what surrounds it (`dir="auto"`), so a U+202E in a
 * prompt cannot reverse the card's other words, and a right-to-left prompt
 * reads right to left.
 */
export function userText(element) {
  element.setAttribute("dir", "auto");
  return element;
}

/** Mark `element` as text in `lang` and set its text. */
export function translated(element, lang, text) {
  element.setAttribute("lang", lang);
  element.textContent = text;
  return element;
}

/** The decorative 🔔 (hidden from screen readers: the label says it). */
export function bell(make, glyph = "🔔") {
  const icon = make("span", "dsh-schedule-bell", { fontSize: "1.15em", lineHeight: "1.2", flex: "none" }, glyph);
  icon.setAttribute("aria-hidden", "true");
  return icon;
}

/** The " · " between meta items. */
export function separator(make) {
  const dot = make("span", "dsh-schedule-separator", null, " · ");
  dot.setAttribute("aria-hidden", "true");
  return dot;
}

/** The document to draw into: the context's, else the global one; throws naming the fix. */
export function documentOf(ctx) {
  const doc = ctx?.document ?? globalThis.document;
  if (!doc || typeof doc.createElement !== "function") {
    throw new TypeError("schedule-reminder: no document to render into (pass ctx.document)");
  }
  return doc;
}
