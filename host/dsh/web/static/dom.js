// The one way this client builds DOM: elements from createElement, text from
// createTextNode. Nothing here (or anywhere in the client) parses HTML, so
// user and model text can never become markup.

/**
 * Create `<tag>` in `doc`. `attrs` become attributes (`class` included;
 * `true` means present, `null`/`undefined`/`false` means absent); `children`
 * are nodes or strings (strings become text nodes).
 */
export function h(doc, tag, attrs = {}, children = []) {
  const element = doc.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    element.setAttribute(name, value === true ? "" : String(value));
  }
  append(doc, element, children);
  return element;
}

/** Append nodes or strings (as text nodes) to `parent`, skipping empty entries. */
export function append(doc, parent, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === "string" ? doc.createTextNode(child) : child);
  }
  return parent;
}

/** True for anything that can be inserted into the DOM. */
export function isNode(value) {
  return value !== null && typeof value === "object" && typeof value.nodeType === "number";
}
