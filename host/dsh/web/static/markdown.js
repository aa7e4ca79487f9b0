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

import { MAX_INLINE_DEPTH, parseInline } from "./markdown-inline.js";
import { safeHref } from "./markdown-links.js";

export { MAX_INLINE_DEPTH, parseInline, safeHref };

/** How deep block containers (quotes, lists) nest; deeper markers stay text. */
export const MAX_BLOCK_DEPTH = 12;
const MAX_COLUMNS = 64;

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
