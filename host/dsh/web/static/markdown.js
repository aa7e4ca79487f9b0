// A small markdown subset, parsed into a plain tree (no DOM, no HTML): the
// client builds DOM nodes from it (markdown-dom.js), so no text can become
// markup. What is recognised:
//
// - blocks: paragraphs, ATX headings (# … ######), fenced code (``` or ~~~),
//   block quotes, bullet and ordered lists (nested by indentation), GFM
//   tables, thematic breaks;
// - inline: backslash escapes, code spans, *em* / _em_, **strong**,
//   ~~strikethrough~~, [links](url "title"), <autolinks> and bare
//   http(s):// URLs.
//
// Links are kept only for http, https and mailto destinations; any other
// link, HTML, images, entities and reference links stay text, exactly as
// written. Every loop is linear in the input (the emphasis rules follow
// CommonMark's delimiter algorithm with its "openers bottom" bounds, the link
// and autolink scans are capped), nesting is capped, and a `meter` counts the
// loop steps so tests can check that work grows linearly with hostile input.
//
// Tree: {type: "doc", children: Block[]}
//   Block  = {type: "paragraph", children: Inline[]} | {type: "heading", level, children}
//          | {type: "code", lang, text} | {type: "quote", children: Block[]}
//          | {type: "list", ordered, start, tight, items: Block[][]}
//          | {type: "table", align: ("left"|"center"|"right"|null)[], head: Inline[][], rows: Inline[][][]}
//          | {type: "hr"}
//   Inline = {type: "text", text} | {type: "code", text} | {type: "link", href, title, children}
//          | {type: "em" | "strong" | "del", children}

/** Nesting caps: block containers (quotes, lists) and inline wrappers. */
export const MAX_BLOCK_DEPTH = 12;
export const MAX_INLINE_DEPTH = 24;
/** How far a link destination, title or <autolink> is looked for. */
const MAX_LINK_SCAN = 2048;
// Looking for a link's end and failing is the one scan that can revisit text
// ("[](" repeated). Each paragraph gets a budget for those scans, proportional
// to its length: ordinary text never exhausts it; once hostile text has, its
// remaining brackets simply stay text.
const LINK_BUDGET_PER_CHAR = 4;
const LINK_BUDGET_BASE = 4096;
const MAX_COLUMNS = 64;

const SCHEMES = ["http:", "https:", "mailto:"];

/**
 * Parse `source` into the tree above. `meter` (optional) is an object whose
 * `steps` counter is incremented once per loop step of the parser.
 */
export function parseMarkdown(source, { meter = null } = {}) {
  const tick = meter === null ? () => {} : () => {
    meter.steps = (meter.steps ?? 0) + 1;
  };
  const text = String(source ?? "").replace(/\r\n?/g, "\n");
  const lines = text.split("\n").map(expandIndent);
  return { type: "doc", children: new BlockParser(tick).blocks(lines, 0) };
}

/**
 * The destination of a link as it may be used in `href`, or null when it is
 * not an absolute http, https or mailto URL.
 */
export function safeHref(raw) {
  const value = String(raw ?? "").trim();
  // No control characters or spaces: browsers strip some of them while parsing,
  // which is how `java\tscript:` tricks work.
  if (value === "" || /[\u0000-\u0020\u007f]/.test(value)) return null;
  if (!/^(https?:\/\/|mailto:)/i.test(value)) return null;
  let url;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (!SCHEMES.includes(url.protocol)) return null;
  if (url.protocol !== "mailto:" && url.hostname === "") return null;
  return url.href;
}

// ---- blocks --------------------------------------------------------------

const FENCE = /^( {0,3})(`{3,}|~{3,})(.*)$/;
const QUOTE = /^ {0,3}> ?/;
const LIST_ITEM = /^( {0,3})([-+*]|\d{1,9}[.)])( {1,4}(?! )|(?=\s*$))/;

function expandIndent(line) {
  if (!line.startsWith("\t") && !line.startsWith(" \t")) return line;
  let i = 0;
  let width = 0;
  while (i < line.length && (line[i] === " " || line[i] === "\t")) {
    width = line[i] === "\t" ? width + 4 - (width % 4) : width + 1;
    i += 1;
  }
  return " ".repeat(width) + line.slice(i);
}

function isBlank(line) {
  return line.trim() === "";
}

function leadingSpaces(line) {
  let n = 0;
  while (n < line.length && line[n] === " ") n += 1;
  return n;
}

function isThematicBreak(line) {
  const compact = line.replace(/[ \t]/g, "");
  if (leadingSpaces(line) > 3 || compact.length < 3) return false;
  const char = compact[0];
  if (char !== "-" && char !== "*" && char !== "_") return false;
  for (const c of compact) if (c !== char) return false;
  return true;
}

/** `{level, text}` of an ATX heading line, or null. */
function atxHeading(line) {
  const indent = leadingSpaces(line);
  if (indent > 3) return null;
  let level = 0;
  while (line[indent + level] === "#") level += 1;
  if (level < 1 || level > 6) return null;
  const rest = line.slice(indent + level);
  if (rest !== "" && rest[0] !== " " && rest[0] !== "\t") return null;
  let text = rest.trim();
  // An optional closing run of #s, separated by a space (or the whole text).
  let end = text.length;
  while (end > 0 && text[end - 1] === "#") end -= 1;
  if (end === 0) text = "";
  else if (end < text.length && (text[end - 1] === " " || text[end - 1] === "\t")) text = text.slice(0, end).trim();
  return { level, text };
}

function listMarker(line) {
  const match = LIST_ITEM.exec(line);
  if (match === null) return null;
  const [whole, indent, marker] = match;
  const ordered = /\d/.test(marker[0]);
  const content = line.slice(whole.length);
  const empty = content.trim() === "";
  const width = indent.length + marker.length + (empty ? 1 : whole.length - indent.length - marker.length);
  return {
    ordered,
    // Items of one list share the bullet, or the delimiter of an ordered list.
    kind: ordered ? marker.at(-1) : marker,
    start: ordered ? Number.parseInt(marker, 10) : 1,
    content: empty ? "" : content,
    empty,
    width,
  };
}

function splitRow(line) {
  let text = line.trim();
  if (text.startsWith("|")) text = text.slice(1);
  if (text.endsWith("|") && !text.endsWith("\\|")) text = text.slice(0, -1);
  const cells = [];
  let cell = "";
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (c === "\\" && text[i + 1] === "|") {
      cell += "|";
      i += 1;
    } else if (c === "|") {
      cells.push(cell.trim());
      cell = "";
    } else {
      cell += c;
    }
  }
  cells.push(cell.trim());
  return cells;
}

function delimiterRow(line) {
  if (!line.includes("-")) return null;
  const cells = splitRow(line);
  const align = [];
  for (const cell of cells) {
    if (!/^:?-+:?$/.test(cell)) return null;
    const left = cell.startsWith(":");
    const right = cell.endsWith(":");
    align.push(left && right ? "center" : right ? "right" : left ? "left" : null);
  }
  return align;
}

class BlockParser {
  constructor(tick) {
    this.tick = tick;
  }

  /** Parse `lines` (one container's content) at nesting `depth`. */
  blocks(lines, depth) {
    const out = [];
    let paragraph = null;
    const flush = () => {
      if (paragraph === null) return;
      out.push({ type: "paragraph", children: parseInline(paragraph.join("\n"), this.tick) });
      paragraph = null;
    };
    let i = 0;
    while (i < lines.length) {
      this.tick();
      const line = lines[i];
      if (isBlank(line)) {
        flush();
        i += 1;
        continue;
      }
      const fence = FENCE.exec(line);
      if (fence !== null && !(fence[2][0] === "`" && fence[3].includes("`"))) {
        flush();
        i = this.fenced(lines, i, fence, out);
        continue;
      }
      const heading = atxHeading(line);
      if (heading !== null) {
        flush();
        out.push({ type: "heading", level: heading.level, children: parseInline(heading.text, this.tick) });
        i += 1;
        continue;
      }
      if (isThematicBreak(line)) {
        flush();
        out.push({ type: "hr" });
        i += 1;
        continue;
      }
      if (depth < MAX_BLOCK_DEPTH && QUOTE.test(line)) {
        flush();
        i = this.quote(lines, i, depth, out);
        continue;
      }
      const marker = depth < MAX_BLOCK_DEPTH ? listMarker(line) : null;
      // A list interrupts a paragraph only with content (and an ordered one only from 1).
      if (marker !== null && (paragraph === null || (!marker.empty && (!marker.ordered || marker.start === 1)))) {
        flush();
        i = this.list(lines, i, marker, depth, out);
        continue;
      }
      if (i + 1 < lines.length && line.includes("|")) {
        const align = delimiterRow(lines[i + 1]);
        if (align !== null && align.length === splitRow(line).length && align.length <= MAX_COLUMNS) {
          flush();
          i = this.table(lines, i, align, out);
          continue;
        }
      }
      paragraph ??= [];
      paragraph.push(line.trim());
      i += 1;
    }
    flush();
    return out;
  }

  fenced(lines, start, fence, out) {
    const indent = fence[1].length;
    const marker = fence[2];
    const lang = (fence[3].trim().split(/\s+/)[0] ?? "").replace(/[^\w+#.-]/g, "").slice(0, 32);
    const body = [];
    let i = start + 1;
    while (i < lines.length) {
      this.tick();
      const line = lines[i];
      const trimmed = line.trim();
      if (
        leadingSpaces(line) <= 3 &&
        trimmed.length >= marker.length &&
        trimmed[0] === marker[0] &&
        [...trimmed].every((c) => c === marker[0])
      ) {
        i += 1;
        break;
      }
      body.push(line.slice(Math.min(indent, leadingSpaces(line))));
      i += 1;
    }
    out.push({ type: "code", lang, text: body.join("\n") });
    return i;
  }

  quote(lines, start, depth, out) {
    const inner = [];
    let i = start;
    let lazyOk = false;
    while (i < lines.length) {
      this.tick();
      const line = lines[i];
      const match = QUOTE.exec(line);
      if (match !== null) {
        const rest = line.slice(match[0].length);
        inner.push(rest);
        lazyOk = !isBlank(rest) && !FENCE.test(rest);
        i += 1;
      } else if (lazyOk && !isBlank(line) && !startsBlock(line)) {
        // A lazy continuation line of the quote's paragraph.
        inner.push(line);
        i += 1;
      } else {
        break;
      }
    }
    out.push({ type: "quote", children: this.blocks(inner, depth + 1) });
    return i;
  }

  list(lines, start, first, depth, out) {
    const items = [];
    let tight = true;
    let i = start;
    while (i < lines.length) {
      const marker = listMarker(lines[i]);
      if (marker === null || marker.ordered !== first.ordered || marker.kind !== first.kind) break;
      const body = [marker.content];
      i += 1;
      let previousBlank = marker.empty;
      while (i < lines.length) {
        this.tick();
        const line = lines[i];
        if (isBlank(line)) {
          body.push("");
          previousBlank = true;
          i += 1;
        } else if (leadingSpaces(line) >= marker.width) {
          body.push(line.slice(marker.width));
          previousBlank = false;
          i += 1;
        } else if (!previousBlank && !startsBlock(line)) {
          body.push(line.trim());
          i += 1;
        } else {
          break;
        }
      }
      let trailing = 0;
      while (body.length > 1 && body.at(-1) === "") {
        body.pop();
        trailing += 1;
      }
      const blocks = this.blocks(body, depth + 1);
      const next = i < lines.length ? listMarker(lines[i]) : null;
      const nextIsItem = next !== null && next.ordered === first.ordered && next.kind === first.kind;
      if ((trailing > 0 && nextIsItem) || (blocks.length > 1 && body.includes(""))) tight = false;
      items.push(blocks);
    }
    out.push({ type: "list", ordered: first.ordered, start: first.start, tight, items });
    return i;
  }

  table(lines, start, align, out) {
    const width = align.length;
    const cells = (line) => {
      const row = splitRow(line).slice(0, width);
      while (row.length < width) row.push("");
      return row.map((cell) => parseInline(cell, this.tick));
    };
    const head = cells(lines[start]);
    const rows = [];
    let i = start + 2;
    while (i < lines.length && !isBlank(lines[i]) && !startsBlock(lines[i])) {
      this.tick();
      rows.push(cells(lines[i]));
      i += 1;
    }
    out.push({ type: "table", align, head, rows });
    return i;
  }
}

function startsBlock(line) {
  return (
    FENCE.test(line) ||
    QUOTE.test(line) ||
    atxHeading(line) !== null ||
    isThematicBreak(line) ||
    listMarker(line) !== null
  );
}

// ---- inline --------------------------------------------------------------

const PUNCTUATION = /[\p{P}\p{S}]/u;
const ESCAPABLE = /[!-/:-@[-`{-~]/;
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
    this.budget = { left: LINK_BUDGET_BASE + LINK_BUDGET_PER_CHAR * text.length, tick };
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
    const child = { kind: "text", text: label, prev: null, next: null };
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

/** One step of a link scan; false once the paragraph's budget is spent. */
function spend(budget) {
  budget.tick();
  budget.left -= 1;
  return budget.left >= 0;
}

/** The index of `char` in `text[from, limit)`, or -1 (stops at a newline when `line`). */
function findWithin(text, char, from, limit, budget, line = false) {
  for (let i = from; i < limit && spend(budget); i += 1) {
    if (text[i] === char) return i;
    if (line && text[i] === "\n") return -1;
  }
  return -1;
}

/** `(destination "title")` starting at `pos` (just after the "("): `{destination, title, end}` or null. */
function linkTarget(text, pos, budget) {
  if (budget.left <= 0) return null;
  const limit = Math.min(text.length, pos + MAX_LINK_SCAN);
  let i = pos;
  const skipSpace = () => {
    while (i < limit && (text[i] === " " || text[i] === "\t" || text[i] === "\n") && spend(budget)) i += 1;
  };
  skipSpace();
  let destination = "";
  if (text[i] === "<") {
    const close = findWithin(text, ">", i + 1, limit, budget, true);
    if (close === -1) return null;
    destination = text.slice(i + 1, close);
    i = close + 1;
  } else {
    let depth = 0;
    const start = i;
    while (i < limit && spend(budget)) {
      const c = text[i];
      if (c === "\\" && ESCAPABLE.test(text[i + 1] ?? "")) {
        i += 2;
        continue;
      }
      if (c === "(") depth += 1;
      else if (c === ")") {
        if (depth === 0) break;
        depth -= 1;
      } else if (/\s/.test(c)) break;
      i += 1;
    }
    destination = text.slice(start, i).replace(/\\([!-/:-@[-`{-~])/g, "$1");
  }
  skipSpace();
  let title = "";
  const quote = text[i];
  if (quote === '"' || quote === "'" || quote === "(") {
    const closing = quote === "(" ? ")" : quote;
    const close = findWithin(text, closing, i + 1, limit, budget);
    if (close === -1) return null;
    title = text.slice(i + 1, close);
    i = close + 1;
    skipSpace();
  }
  if (text[i] !== ")") return null;
  return { destination, title, end: i + 1 };
}

// GFM's extended autolink end: trailing punctuation is not part of the URL,
// and a closing parenthesis only when it balances one inside.
function trimUrlEnd(text, start, end, tick) {
  let open = 0;
  let close = 0;
  for (let i = start; i < end; i += 1) {
    tick();
    if (text[i] === "(") open += 1;
    else if (text[i] === ")") close += 1;
  }
  let stop = end;
  while (stop > start) {
    tick();
    const c = text[stop - 1];
    if (c === ")" && close > open) close -= 1;
    else if (!"?!.,:*_~'\";".includes(c)) break;
    stop -= 1;
  }
  return stop;
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
