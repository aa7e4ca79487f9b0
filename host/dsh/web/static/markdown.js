// Markdown as models write it: CommonMark with GFM tables, strikethrough,
// bare-URL links and task lists, plus math, parsed by markdown-it
// (vendor/markdown-it, MIT) into its flat token stream. No HTML is produced
// here or anywhere: markdown-dom.js builds DOM nodes from the tokens.
//
// How the parser is set up, and why:
// 1. `html: false`: raw HTML is never markup; it stays text as written.
// 2. Links are recognised only for destinations `safeHref` accepts
//    (absolute http, https, mailto): markdown-it asks `validateLink`, so any
//    other link — `javascript:`, `data:`, relative — stays text as written.
// 3. Bare URLs become links only with their scheme (`fuzzyLink: false`):
//    "example.com" in prose stays prose.
// 4. Blocks nest at most MAX_NESTING deep (markdown-it's own bound; its
//    block rules recurse, and text past the bound is left out). The DOM
//    builder caps what becomes elements far lower (markdown-dom.js).
// 5. Math (`$…$`, `$$…$$`, `\(…\)`, `\[…\]`) is markdown-math.js.
// 6. Task list items (`- [ ] x`, `- [x] x`) get `meta.task` on their
//    `list_item_open` ("open" or "done"), the marker removed from the text.
//
// Streaming (`streaming: true`, the answer while it is being written): the
// text may end in the middle of a construct. What could turn into something
// else once the next delta arrives is held as plain text instead:
// - an unclosed display formula shows its source (markdown-math.js rule 3),
// - an unclosed inline formula in the last paragraph stays text (rule 4),
// - an unfinished last line under a table's header row (`|--`, `-`) is left
//   out until it has a cell for each header cell, so the header never
//   flashes as a setext heading or a one-column table.

import MarkdownIt from "./vendor/markdown-it/markdown-it.mjs";
import { safeHref } from "./markdown-links.js";
import { mathPlugin } from "./markdown-math.js";

export { safeHref };

/** The language named by a code fence's info string: its first word, entities and escapes resolved. */
export function fenceLanguage(info) {
  return PARSER.utils.unescapeAll(String(info ?? "")).trim().split(/\s+/)[0];
}

/** How deep markdown-it parses nested blocks. */
export const MAX_NESTING = 100;

const TASK = /^\[([ xX])\](?=\s|$)\s?/;
// A partial table delimiter row: pipes, colons, dashes and spaces only.
const PARTIAL_DELIMITER = /^ {0,3}[|:\- \t]+$/;

function createParser() {
  const md = new MarkdownIt("default", {
    html: false,
    linkify: true,
    typographer: false,
    maxNesting: MAX_NESTING,
  });
  md.linkify.set({ fuzzyLink: false, fuzzyEmail: false, fuzzyIP: false });
  md.validateLink = (url) => safeHref(url) !== null;
  md.use(mathPlugin);
  md.core.ruler.after("block", "math_tail", markTail);
  md.core.ruler.after("inline", "task_lists", taskLists);
  return md;
}

// One configured parser for the page; markdown-it keeps no state between parses.
const PARSER = createParser();

/**
 * The tokens of `source` (markdown-it's stream). `streaming` applies the
 * rules above for text that is still being written. `meter` (tests only) is
 * an object whose `steps` counter counts every parser rule call and every
 * token, so tests can check that work grows linearly with hostile input.
 */
export function parseMarkdown(source, { streaming = false, meter = null } = {}) {
  let text = String(source ?? "");
  if (streaming) text = holdUnfinishedLine(text);
  const env = { streaming };
  if (meter === null) {
    return PARSER.parse(text, env);
  }
  const md = metered(createParser(), meter);
  const tokens = md.parse(text, env);
  meter.steps = (meter.steps ?? 0) + countTokens(tokens);
  return tokens;
}

/**
 * The text without its last line when that line is a table delimiter row
 * still being written: fewer complete cells than the header row above it.
 */
function holdUnfinishedLine(text) {
  const cut = text.lastIndexOf("\n");
  if (cut === -1) return text;
  const last = text.slice(cut + 1);
  if (last.trim() === "" || !PARTIAL_DELIMITER.test(last)) return text;
  const previous = text.slice(text.lastIndexOf("\n", cut - 1) + 1, cut);
  if (!previous.includes("|")) return text;
  const delimiters = cells(last);
  const complete = delimiters.length >= cells(previous).length && delimiters.every((cell) => /^:?-+:?$/.test(cell));
  return complete ? text : text.slice(0, cut);
}

/** The cells of a table row, outer pipes dropped (escaped pipes are not separators). */
function cells(row) {
  const inner = row.trim().replace(/^\|/, "").replace(/(?<!\\)\|$/, "");
  return inner.split(/(?<!\\)\|/).map((cell) => cell.trim());
}

/** Core rule: name the last paragraph's inline text, where a formula may still be arriving. */
function markTail(state) {
  for (let i = state.tokens.length - 1; i >= 0; i -= 1) {
    if (state.tokens[i].type === "inline") {
      state.env.tail = state.tokens[i].content;
      return;
    }
  }
}

/** Core rule: GFM task list items (rule 6). */
function taskLists(state) {
  const tokens = state.tokens;
  for (let i = 2; i < tokens.length; i += 1) {
    const inline = tokens[i];
    if (inline.type !== "inline" || tokens[i - 1].type !== "paragraph_open" || tokens[i - 2].type !== "list_item_open") continue;
    const first = inline.children[0];
    const match = first?.type === "text" ? TASK.exec(first.content) : null;
    if (match === null) continue;
    first.content = first.content.slice(match[0].length);
    tokens[i - 2].meta = { ...tokens[i - 2].meta, task: match[1] === " " ? "open" : "done" };
  }
}

/** Wrap every rule of `md` so that each call counts one step on `meter`. */
function metered(md, meter) {
  const rulers = [md.core.ruler, md.block.ruler, md.inline.ruler, md.inline.ruler2];
  for (const ruler of rulers) {
    for (const rule of ruler.__rules__) {
      const fn = rule.fn;
      rule.fn = (...args) => {
        meter.steps = (meter.steps ?? 0) + 1;
        return fn(...args);
      };
    }
    ruler.__cache__ = null;
  }
  return md;
}

function countTokens(tokens) {
  let count = 0;
  for (const token of tokens) count += 1 + (token.children?.length ?? 0);
  return count;
}
