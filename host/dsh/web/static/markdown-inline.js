// Inline markdown: backslash escapes, code spans, *em* / _em_, **strong**,
// ~~strikethrough~~, [links](url "title"), <autolinks> and bare http(s)://
// URLs, into inline nodes (see markdown.js for the tree). Emphasis follows
// CommonMark's delimiter algorithm with its "openers bottom" bounds, so the
// work stays linear; items are a linked list so wrapping is O(1); nesting
// beyond MAX_INLINE_DEPTH keeps its text and markers but not its wrappers.

import { visibleBidi } from "./bidi.js";
import { ESCAPABLE, MAX_LINK_SCAN, linkBudget, linkTarget, safeHref, spend, trimUrlEnd } from "./markdown-links.js";

/** How deep inline wrappers (em, strong, del, link) nest. */
export const MAX_INLINE_DEPTH = 24;

const PUNCTUATION = /[\p{P}\p{S}]/u;
// Where plain text stops: characters with a meaning, and the start of a bare URL.
const SPECIAL = "[\\\\`*_~[\\]<\\n]|https?://";

function isSpace(c) {
  return c === undefined || /\s/u.test(c);
}

function isPunct(c) {
  return c !== undefined && PUNCTUATION.test(c);
}

/**
 * The inline items of one run of text, as a doubly linked list the emphasis
 * and link rules can rewrap in O(1): every item has `prev`/`next`; wrappers
 * (em, strong, del, link) hold their own list in `first`/`last`.
 */
class Items {
  constructor() {
    this.first = null;
    this.last = null;
  }

  push(item) {
    item.prev = this.last;
    item.next = null;
    if (this.last === null) this.first = item;
    else this.last.next = item;
    this.last = item;
    return item;
  }
}

function unlink(list, item) {
  if (item.prev === null) list.first = item.next;
  else item.prev.next = item.next;
  if (item.next === null) list.last = item.prev;
  else item.next.prev = item.prev;
}

/** Parse one paragraph's (or cell's, or heading's) text into inline nodes. */
export function parseInline(text, tick = () => {}) {
  return new InlineParser(text, tick).run();
}

class InlineParser {
  constructor(text, tick) {
    this.text = text;
    this.tick = tick;
    this.items = new Items();
    this.delims = null; // top of the delimiter stack (linked by prev/next)
    this.brackets = []; // open "[" items
    this.linkFloor = 0; // brackets below this index are inside a link: inactive
    this.backticks = backtickRuns(text, tick);
    this.special = new RegExp(SPECIAL, "g");
    this.budget = linkBudget(text.length, tick);
  }

  run() {
    const text = this.text;
    let pos = 0;
    while (pos < text.length) {
      this.tick();
      this.special.lastIndex = pos;
      const found = this.special.exec(text);
      const at = found === null ? text.length : found.index;
      if (at > pos) this.text_(text.slice(pos, at));
      if (at >= text.length) break;
      pos = this.handle(at);
    }
    this.processEmphasis(null);
    return toTree(this.items, this.tick);
  }

  text_(value) {
    const last = this.items.last;
    if (last !== null && last.kind === "text" && last.delim === undefined && !last.bracket) last.text += value;
    else this.items.push({ kind: "text", text: value });
  }

  handle(at) {
    const text = this.text;
    const c = text[at];
    switch (c) {
      case "\\":
        if (text[at + 1] === "\n") {
          // A backslash at the end of a line is a hard break: the newline stays.
          this.text_("\n");
          return at + 2;
        }
        if (ESCAPABLE.test(text[at + 1] ?? "")) {
          this.items.push({ kind: "text", text: text[at + 1] });
          return at + 2;
        }
        this.text_("\\");
        return at + 1;
      case "`":
        return this.codeSpan(at);
      case "*":
      case "_":
      case "~":
        return this.delimiterRun(at);
      case "[":
        this.brackets.push(this.items.push({ kind: "text", text: "[", bracket: true, bottom: this.delims }));
        return at + 1;
      case "]":
        return this.closeBracket(at);
      case "<":
        return this.angleAutolink(at);
      case "h":
        // The SPECIAL pattern only stops at an "h" that starts http:// or https://.
        return this.bareUrl(at);
      default:
        // "\n": a line break inside the paragraph, kept as a newline.
        this.text_(c);
        return at + 1;
    }
  }

  codeSpan(at) {
    let end = at;
    while (this.text[end] === "`") end += 1;
    const length = end - at;
    const closer = this.backticks.next(length, end);
    if (closer === null) {
      this.text_("`".repeat(length));
      return end;
    }
    let content = this.text.slice(end, closer).replace(/\n/g, " ");
    if (content.length >= 2 && content.startsWith(" ") && content.endsWith(" ") && content.trim() !== "") {
      content = content.slice(1, -1);
    }
    this.items.push({ kind: "code", text: content });
    return closer + length;
  }

  delimiterRun(at) {
    const text = this.text;
    const char = text[at];
    let end = at;
    while (text[end] === char) end += 1;
    const count = end - at;
    if (char === "~" && count !== 2) {
      this.text_("~".repeat(count));
      return end;
    }
    const before = at === 0 ? undefined : text[at - 1];
    const after = text[end];
    const leftFlanking = !isSpace(after) && (!isPunct(after) || isSpace(before) || isPunct(before));
    const rightFlanking = !isSpace(before) && (!isPunct(before) || isSpace(after) || isPunct(after));
    let canOpen = leftFlanking;
    let canClose = rightFlanking;
    if (char === "_") {
      canOpen = leftFlanking && (!rightFlanking || isPunct(before));
      canClose = rightFlanking && (!leftFlanking || isPunct(after));
    }
    const item = this.items.push({ kind: "text", text: char.repeat(count) });
    if (canOpen || canClose) {
      const delim = { item, char, count, original: count, canOpen, canClose, prev: this.delims, next: null };
      if (this.delims !== null) this.delims.next = delim;
      this.delims = delim;
      item.delim = delim;
    }
    return end;
  }

  closeBracket(at) {
    const opener = this.brackets.pop();
    if (opener === undefined || this.brackets.length < this.linkFloor) {
      if (opener !== undefined) this.linkFloor = this.brackets.length;
      this.text_("]");
      return at + 1;
    }
    const target = this.text[at + 1] === "(" ? linkTarget(this.text, at + 2, this.budget) : null;
    const href = target === null ? null : safeHref(target.destination);
    if (href === null) {
      // Not a link we keep: the brackets (and what follows) stay text.
      opener.bracket = false;
      this.text_("]");
      return at + 1;
    }
    this.processEmphasis(opener.bottom);
    const link = { kind: "link", href, title: target.title, first: opener.next, last: null };
    if (link.first !== null) {
      link.last = this.items.last;
      link.first.prev = null;
    }
    this.items.last = opener;
    opener.next = null;
    unlink(this.items, opener);
    this.items.push(link);
    // No links inside links: every "[" still open is now plain text.
    this.linkFloor = this.brackets.length;
    return target.end;
  }

  angleAutolink(at) {
    const text = this.text;
    const limit = Math.min(text.length, at + MAX_LINK_SCAN);
    let end = at + 1;
    while (end < limit && text[end] !== ">" && text[end] !== "<" && !/\s/.test(text[end]) && spend(this.budget)) {
      end += 1;
    }
    if (end < limit && text[end] === ">") {
      const href = safeHref(text.slice(at + 1, end));
      if (href !== null) {
        this.pushAutolink(href, text.slice(at + 1, end));
        return end + 1;
      }
    }
    this.text_("<");
    return at + 1;
  }

  bareUrl(at) {
    const text = this.text;
    const prefix = text.startsWith("https://", at) ? 8 : 7;
    const before = at === 0 ? undefined : text[at - 1];
    if (!(isSpace(before) || "*_~(".includes(before))) {
      this.text_(text.slice(at, at + prefix));
      return at + prefix;
    }
    let end = at + prefix;
    while (end < text.length && !/\s/.test(text[end]) && text[end] !== "<") {
      this.tick();
      end += 1;
    }
    end = trimUrlEnd(text, at + prefix, end, this.tick);
    const href = end > at + prefix ? safeHref(text.slice(at, end)) : null;
    if (href === null) {
      // Not a URL we link: all of it stays text (a rescan could find nothing else).
      const stop = Math.max(end, at + prefix);
      this.text_(text.slice(at, stop));
      return stop;
    }
    this.pushAutolink(href, text.slice(at, end));
    return end;
  }

  pushAutolink(href, label) {
    // The label is the URL as written: a bidi control in it would make it read as
    // another URL, so it shows the way the href carries it (bidi.js).
    const child = { kind: "text", text: visibleBidi(label), prev: null, next: null };
    this.items.push({ kind: "link", href, title: "", first: child, last: child });
  }

  /**
   * CommonMark's "process emphasis" over the delimiters above `bottom`:
   * each closer, from the oldest, looks back for the nearest matching opener,
   * never below the bound remembered for its kind (so a failed search is not
   * repeated: the whole pass stays linear).
   */
  processEmphasis(bottom) {
    const openersBottom = new Map();
    let closer = bottom === null ? this.firstDelim() : bottom.next;
    while (closer !== null) {
      this.tick();
      if (!closer.canClose) {
        closer = closer.next;
        continue;
      }
      const key = `${closer.char}${closer.canOpen ? 1 : 0}${closer.original % 3}`;
      const floor = openersBottom.has(key) ? openersBottom.get(key) : bottom;
      let opener = closer.prev;
      while (opener !== null && opener !== floor && opener !== bottom) {
        this.tick();
        if (opener.char === closer.char && opener.canOpen && this.compatible(opener, closer)) break;
        opener = opener.prev;
      }
      if (opener === null || opener === floor || opener === bottom) {
        openersBottom.set(key, closer.prev);
        const next = closer.next;
        if (!closer.canOpen) this.removeDelim(closer);
        closer = next;
        continue;
      }
      closer = this.wrap(opener, closer);
    }
    // Unmatched delimiters above the bottom are plain text from now on.
    let top = this.delims;
    while (top !== null && top !== bottom) {
      this.tick();
      const below = top.prev;
      this.removeDelim(top);
      top = below;
    }
  }

  firstDelim() {
    let delim = this.delims;
    while (delim !== null && delim.prev !== null) {
      this.tick();
      delim = delim.prev;
    }
    return delim;
  }

  compatible(opener, closer) {
    if (opener.char === "~") return opener.count >= 2 && closer.count >= 2;
    // The "rule of 3" for runs that can both open and close.
    if ((opener.canClose || closer.canOpen) && (opener.original + closer.original) % 3 === 0) {
      return opener.original % 3 === 0 && closer.original % 3 === 0;
    }
    return true;
  }

  /** Wrap the items between `opener` and `closer`; returns the closer to continue with. */
  wrap(opener, closer) {
    const used = opener.char === "~" ? 2 : opener.count >= 2 && closer.count >= 2 ? 2 : 1;
    const kind = opener.char === "~" ? "del" : used === 2 ? "strong" : "em";
    const node = { kind, marker: opener.char.repeat(used), first: opener.item.next, last: closer.item.prev };
    if (node.first === closer.item) {
      node.first = null;
      node.last = null;
    } else {
      node.first.prev = null;
      node.last.next = null;
    }
    opener.item.next = node;
    node.prev = opener.item;
    node.next = closer.item;
    closer.item.prev = node;
    // Delimiters between the two are now inside the wrapper: plain text.
    let between = closer.prev;
    while (between !== opener) {
      this.tick();
      const below = between.prev;
      this.removeDelim(between);
      between = below;
    }
    opener.count -= used;
    closer.count -= used;
    opener.item.text = opener.char.repeat(opener.count);
    closer.item.text = closer.char.repeat(closer.count);
    if (opener.count === 0) {
      unlink(this.items, opener.item);
      this.removeDelim(opener);
    }
    if (closer.count === 0) {
      const next = closer.next;
      unlink(this.items, closer.item);
      this.removeDelim(closer);
      return next;
    }
    return closer;
  }

  removeDelim(delim) {
    if (delim.prev !== null) delim.prev.next = delim.next;
    if (delim.next !== null) delim.next.prev = delim.prev;
    else this.delims = delim.prev;
    delim.item.delim = undefined;
  }
}

/** Positions of every maximal backtick run, by length, consumed left to right. */
function backtickRuns(text, tick) {
  const byLength = new Map();
  const cursor = new Map();
  let index = text.indexOf("`");
  while (index !== -1) {
    tick();
    let end = index;
    while (text[end] === "`") end += 1;
    const length = end - index;
    if (!byLength.has(length)) byLength.set(length, []);
    byLength.get(length).push(index);
    index = text.indexOf("`", end);
  }
  return {
    /** Start of the first run of exactly `length` backticks at or after `from`, or null. */
    next(length, from) {
      const runs = byLength.get(length);
      if (runs === undefined) return null;
      let i = cursor.get(length) ?? 0;
      while (i < runs.length && runs[i] < from) {
        tick();
        i += 1;
      }
      cursor.set(length, i);
      return i < runs.length ? runs[i] : null;
    },
  };
}

/**
 * Turn the linked items into plain nodes, merging adjacent text. Iterative
 * (hostile nesting must not exhaust the stack); wrappers nested deeper than
 * MAX_INLINE_DEPTH are dropped and their markers kept as text.
 */
function toTree(items, tick) {
  const root = [];
  const stack = [{ item: items.first, out: root, depth: 0, closing: null }];
  while (stack.length > 0) {
    tick();
    const frame = stack.at(-1);
    const item = frame.item;
    if (item === null) {
      stack.pop();
      if (frame.closing !== null) pushText(frame.out, frame.closing);
      continue;
    }
    frame.item = item.next;
    if (item.kind === "text") {
      if (item.text !== "") pushText(frame.out, item.text);
    } else if (item.kind === "code") {
      frame.out.push({ type: "code", text: item.text });
    } else if (frame.depth >= MAX_INLINE_DEPTH) {
      // Too deep: keep the text (and an emphasis marker) without the wrapper.
      const marker = item.kind === "link" ? null : item.marker;
      if (marker) pushText(frame.out, marker);
      stack.push({ item: item.first, out: frame.out, depth: frame.depth, closing: marker ?? null });
    } else {
      const node =
        item.kind === "link"
          ? { type: "link", href: item.href, title: item.title, children: [] }
          : { type: item.kind, children: [] };
      frame.out.push(node);
      stack.push({ item: item.first, out: node.children, depth: frame.depth + 1, closing: null });
    }
  }
  return root;
}

function pushText(out, text) {
  const last = out.at(-1);
  if (last !== undefined && last.type === "text") last.text += text;
  else out.push({ type: "text", text });
}
