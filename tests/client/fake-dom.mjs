// A tiny DOM for node tests: elements, text nodes, attributes, listeners with
// bubbling, focus (document.activeElement, focusin/focusout), <dialog>'s
// showModal/close, and querySelector for tag / [attr] / [attr=value] / .class
// compounds joined by descendant spaces, in comma-separated lists. It has no
// HTML parser on purpose:
// innerHTML, outerHTML and insertAdjacentHTML throw, so a client module that
// tried to parse markup fails the test instead of passing silently.

class FakeNode {
  constructor(ownerDocument) {
    this.ownerDocument = ownerDocument;
    this.parentNode = null;
    this.childNodes = [];
  }

  get children() {
    return this.childNodes.filter((node) => node.nodeType === 1);
  }

  get firstChild() {
    return this.childNodes[0] ?? null;
  }

  get nextSibling() {
    if (this.parentNode === null) return null;
    const siblings = this.parentNode.childNodes;
    return siblings[siblings.indexOf(this) + 1] ?? null;
  }

  /** Insert `node` before `reference` (append when null); counts every node it moves. */
  insertBefore(node, reference) {
    if (reference === null) return this.appendChild(node);
    if (reference.parentNode !== this) throw new Error("NotFoundError");
    if (node === this || node.contains(this)) throw new Error("HierarchyRequestError");
    if (node.parentNode !== null) this.ownerDocument.moved = (this.ownerDocument.moved ?? 0) + 1;
    node.remove();
    node.parentNode = this;
    this.childNodes.splice(this.childNodes.indexOf(reference), 0, node);
    return node;
  }

  get textContent() {
    return this.childNodes.map((node) => node.textContent).join("");
  }

  set textContent(value) {
    this.replaceChildren();
    const text = String(value ?? "");
    if (text !== "") this.appendChild(this.ownerDocument.createTextNode(text));
  }

  appendChild(node) {
    if (!(node instanceof FakeNode)) throw new TypeError("appendChild expects a node");
    if (node === this || node.contains(this)) throw new Error("HierarchyRequestError");
    node.remove();
    node.parentNode = this;
    this.childNodes.push(node);
    return node;
  }

  append(...nodes) {
    for (const node of nodes) {
      this.appendChild(typeof node === "string" ? this.ownerDocument.createTextNode(node) : node);
    }
  }

  replaceChildren(...nodes) {
    for (const child of [...this.childNodes]) child.remove();
    this.append(...nodes);
  }

  /** Detach; like a browser, taking the focused element (or its ancestor) out drops the focus. */
  remove() {
    if (this.parentNode === null) return;
    const doc = this.ownerDocument;
    if (doc.activeElement && doc.activeElement !== doc.body && this.contains(doc.activeElement)) {
      doc.activeElement = doc.body;
    }
    const siblings = this.parentNode.childNodes;
    siblings.splice(siblings.indexOf(this), 1);
    this.parentNode = null;
  }

  contains(node) {
    for (let at = node; at !== null; at = at.parentNode) if (at === this) return true;
    return false;
  }

  get isConnected() {
    return this.ownerDocument.documentElement.contains(this);
  }
}

class FakeText extends FakeNode {
  constructor(ownerDocument, data) {
    super(ownerDocument);
    this.nodeType = 3;
    this.data = String(data);
  }

  get textContent() {
    return this.data;
  }

  set textContent(value) {
    this.data = String(value);
  }
}

function forbidden(name) {
  return () => {
    throw new Error(`fake DOM: ${name} parses HTML and is forbidden in the client`);
  };
}

class FakeElement extends FakeNode {
  constructor(ownerDocument, tagName) {
    super(ownerDocument);
    this.nodeType = 1;
    this.localName = String(tagName).toLowerCase();
    this.tagName = this.localName.toUpperCase();
    this.attributes = new Map();
    this.listeners = new Map();
    this.style = {};
    this.value = "";
  }

  get className() {
    return this.getAttribute("class") ?? "";
  }

  set className(value) {
    this.setAttribute("class", value);
  }

  get classList() {
    return this.className.split(/\s+/).filter(Boolean);
  }

  setAttribute(name, value) {
    this.attributes.set(String(name).toLowerCase(), String(value));
  }

  getAttribute(name) {
    return this.attributes.get(String(name).toLowerCase()) ?? null;
  }

  hasAttribute(name) {
    return this.attributes.has(String(name).toLowerCase());
  }

  removeAttribute(name) {
    this.attributes.delete(String(name).toLowerCase());
  }

  addEventListener(type, listener) {
    if (!this.listeners.has(type)) this.listeners.set(type, []);
    this.listeners.get(type).push(listener);
  }

  removeEventListener(type, listener) {
    const list = this.listeners.get(type) ?? [];
    this.listeners.set(type, list.filter((item) => item !== listener));
  }

  /** Deliver `event` here and to every ancestor (bubbling) unless stopped. */
  dispatchEvent(event) {
    const ev = event;
    ev.target ??= this;
    ev.defaultPrevented ??= false;
    ev.preventDefault ??= () => {
      ev.defaultPrevented = true;
    };
    ev.stopPropagation ??= () => {
      ev.propagationStopped = true;
    };
    for (let at = this; at !== null && !ev.propagationStopped; at = at.parentNode) {
      ev.currentTarget = at;
      for (const listener of [...(at.listeners?.get(ev.type) ?? [])]) listener.call(at, ev);
      if (ev.bubbles === false) break;
    }
    return !ev.defaultPrevented;
  }

  /** Focus this element: document.activeElement, then focus and a bubbling focusin. */
  focus() {
    const doc = this.ownerDocument;
    if (doc.activeElement === this) return;
    const previous = doc.activeElement;
    if (previous !== null && previous !== doc.body) {
      previous.dispatchEvent({ type: "blur", bubbles: false, relatedTarget: this });
      previous.dispatchEvent({ type: "focusout", relatedTarget: this });
    }
    doc.activeElement = this;
    this.focusCount = (this.focusCount ?? 0) + 1;
    this.dispatchEvent({ type: "focus", bubbles: false });
    this.dispatchEvent({ type: "focusin", relatedTarget: previous });
  }

  blur() {
    const doc = this.ownerDocument;
    if (doc.activeElement !== this) return;
    doc.activeElement = doc.body;
    this.dispatchEvent({ type: "blur", bubbles: false });
    this.dispatchEvent({ type: "focusout", relatedTarget: null });
  }

  select() {
    this.selected = true;
  }

  /** <dialog>: open it (modal); close() closes it and sends "close". */
  showModal() {
    if (this.localName !== "dialog") throw new Error("showModal on a non-dialog");
    this.setAttribute("open", "");
  }

  close() {
    if (!this.hasAttribute("open")) return;
    this.removeAttribute("open");
    this.dispatchEvent({ type: "close", bubbles: false });
  }

  /** Like a browser: clicking a submit button (not prevented) submits its form. */
  click() {
    if (this.hasAttribute("disabled")) return false;
    const proceed = this.dispatchEvent({ type: "click" });
    const type = this.getAttribute("type") ?? "submit";
    if (proceed && this.localName === "button" && type === "submit") {
      this.parentNode?.closest?.("form")?.dispatchEvent({ type: "submit" });
    }
    return proceed;
  }

  matches(selector) {
    return parseSelectorList(selector).some((parts) => matchesChain(this, parts));
  }

  closest(selector) {
    for (let at = this; at !== null && at.nodeType === 1; at = at.parentNode) {
      if (at.matches(selector)) return at;
    }
    return null;
  }

  querySelectorAll(selector) {
    const list = parseSelectorList(selector);
    const found = [];
    const walk = (node) => {
      for (const child of node.children) {
        if (list.some((parts) => matchesChain(child, parts, this))) found.push(child);
        walk(child);
      }
    };
    walk(this);
    return found;
  }

  querySelector(selector) {
    return this.querySelectorAll(selector)[0] ?? null;
  }

  get innerHTML() {
    return forbidden("innerHTML")();
  }

  set innerHTML(_value) {
    forbidden("innerHTML")();
  }

  get outerHTML() {
    return forbidden("outerHTML")();
  }

  set outerHTML(_value) {
    forbidden("outerHTML")();
  }

  insertAdjacentHTML() {
    forbidden("insertAdjacentHTML")();
  }
}

/** A compound selector: `{tag, attrs: [{name, value}], classes}`. */
function parseCompound(text) {
  const compound = { tag: null, attrs: [], classes: [] };
  const pattern = /^([a-zA-Z][\w-]*)|\[([\w-]+)(?:=(?:"([^"]*)"|'([^']*)'|([^\]]*)))?\]|\.([\w-]+)/y;
  let index = 0;
  while (index < text.length) {
    pattern.lastIndex = index;
    const match = pattern.exec(text);
    if (match === null || match.index !== index) throw new Error(`fake DOM: unsupported selector ${text}`);
    if (match[1] !== undefined) compound.tag = match[1].toLowerCase();
    else if (match[2] !== undefined) {
      const value = match[3] ?? match[4] ?? match[5];
      compound.attrs.push({ name: match[2].toLowerCase(), value });
    } else compound.classes.push(match[6]);
    index = pattern.lastIndex;
  }
  return compound;
}

function parseSelector(selector) {
  return selector.trim().split(/\s+/).map(parseCompound);
}

function parseSelectorList(selector) {
  return selector.split(",").map(parseSelector);
}

function matchesCompound(element, compound) {
  if (compound.tag !== null && element.localName !== compound.tag) return false;
  for (const { name, value } of compound.attrs) {
    if (!element.hasAttribute(name)) return false;
    if (value !== undefined && element.getAttribute(name) !== value) return false;
  }
  const classes = element.classList;
  return compound.classes.every((name) => classes.includes(name));
}

function matchesChain(element, parts, scope = null) {
  const last = parts.at(-1);
  if (!matchesCompound(element, last)) return false;
  let index = parts.length - 2;
  for (let at = element.parentNode; index >= 0 && at !== null && at !== scope; at = at.parentNode) {
    if (at.nodeType === 1 && matchesCompound(at, parts[index])) index -= 1;
  }
  return index < 0;
}

/** A document with a `created` log of every tag name passed to createElement. */
export class FakeDocument {
  constructor() {
    this.created = [];
    this.documentElement = new FakeElement(this, "html");
    this.body = new FakeElement(this, "body");
    this.documentElement.appendChild(this.body);
    this.activeElement = this.body;
    this.listeners = new Map();
  }

  addEventListener(type, listener) {
    if (!this.listeners.has(type)) this.listeners.set(type, []);
    this.listeners.get(type).push(listener);
  }

  removeEventListener(type, listener) {
    const list = this.listeners.get(type) ?? [];
    this.listeners.set(type, list.filter((item) => item !== listener));
  }

  /** A key press as the browser delivers it: to the focused element, bubbling up to the document. */
  keydown(init) {
    const event = { type: "keydown", ...init };
    event.target ??= this.activeElement;
    event.defaultPrevented = false;
    event.preventDefault = () => {
      event.defaultPrevented = true;
    };
    if (event.target !== this) event.target.dispatchEvent(event);
    if (!event.propagationStopped) for (const listener of [...(this.listeners.get("keydown") ?? [])]) listener(event);
    return event;
  }

  createElement(tagName) {
    this.created.push(String(tagName).toLowerCase());
    return new FakeElement(this, tagName);
  }

  /** An element in namespace `namespace` (MathML, SVG); logged in `created` like any other. */
  createElementNS(namespace, tagName) {
    this.created.push(String(tagName).toLowerCase());
    const element = new FakeElement(this, tagName);
    element.namespaceURI = namespace;
    return element;
  }

  createTextNode(data) {
    return new FakeText(this, data);
  }

  querySelector(selector) {
    return this.documentElement.matches(selector)
      ? this.documentElement
      : this.documentElement.querySelector(selector);
  }

  querySelectorAll(selector) {
    return this.documentElement.querySelectorAll(selector);
  }
}

/** Every element under `root` (depth first), root excluded. */
export function descendants(root) {
  const out = [];
  for (const child of root.children) out.push(child, ...descendants(child));
  return out;
}
