// Math in markdown, as models write it: the markdown-it rules that find
// `$…$`, `$$…$$`, `\(…\)` and `\[…\]` and turn them into `math_inline` /
// `math_block` tokens holding the TeX source (markdown-katex.js draws them).
//
// Rules, so that ordinary text with dollars (prices) stays text:
// 1. `$…$`: the opening `$` is not followed by a space or another `$`; the
//    formula ends at the next `$` not escaped by a backslash, which must not
//    be preceded by a space nor followed by a digit, else there is no formula
//    ("costs $5 and $10" is text, and so is "$5, or $x$" up to `$x$`).
// 2. `$$…$$`, `\(…\)`, `\[…\]` need only their closer; `\$` is a dollar.
// 3. A line that starts with `$$` or `\[` opens a display block (it may
//    interrupt a paragraph) that runs to the line ending with the closer;
//    without a closer it is no block (`\[` is also an escaped bracket). While
//    streaming, a block not closed yet shows its source as written
//    (`meta.closed` false), so a formula is never drawn half-way.
// 4. While streaming (`env.streaming`), an inline opener with no closer in
//    the text's last paragraph keeps the rest of that paragraph as plain text
//    (`math_pending`): TeX's `_` and `*` must not flicker into emphasis.
//
// Work is linear: a `$` looks only as far as the next `$`; the other openers
// first ask whether their closer occurs at all after this point (its last
// position in the paragraph, found once per paragraph), so a run of openers
// with no closer costs one step each, and a found closer consumes the text
// it scanned.

/** Formulas longer than this are shown as their source (KaTeX's work grows with them). */
export const MAX_FORMULA = 8000;

const DOLLAR = 0x24;
const BACKSLASH = 0x5c;

/** Install the math rules on the markdown-it instance `md`. */
export function mathPlugin(md) {
  md.block.ruler.before("fence", "math_block", mathBlock, { alt: ["paragraph", "reference", "blockquote", "list"] });
  md.inline.ruler.before("escape", "math_inline", mathInline);
}

// ---- inline --------------------------------------------------------------

const lastClosers = new WeakMap();

/** The last index of each closer kind in the paragraph `state.src` (cached per inline state). */
function closersOf(state) {
  let found = lastClosers.get(state);
  if (found === undefined) {
    const src = state.src;
    found = {
      double: src.lastIndexOf("$$"),
      paren: src.lastIndexOf("\\)"),
      bracket: src.lastIndexOf("\\]"),
    };
    lastClosers.set(state, found);
  }
  return found;
}

function isSpace(code) {
  return code === 0x20 || code === 0x09 || code === 0x0a;
}

function isDigit(code) {
  return code >= 0x30 && code <= 0x39;
}

/** True when a single `$` at `i` may close inline math (rule 1). */
function closesDollar(src, i) {
  if (src.charCodeAt(i) !== DOLLAR) return false;
  const before = src.charCodeAt(i - 1);
  if (isSpace(before) || before === BACKSLASH || before === DOLLAR) return false;
  const after = src.charCodeAt(i + 1);
  return !isDigit(after) && after !== DOLLAR;
}

function mathInline(state, silent) {
  const src = state.src;
  const start = state.pos;
  const code = src.charCodeAt(start);
  let open;
  let close;
  let display;
  let last;
  if (code === BACKSLASH) {
    const next = src[start + 1];
    if (next !== "(" && next !== "[") return false;
    open = `\\${next}`;
    close = next === "(" ? "\\)" : "\\]";
    display = next === "[";
    last = next === "(" ? closersOf(state).paren : closersOf(state).bracket;
  } else if (code === DOLLAR) {
    if (src.charCodeAt(start + 1) === DOLLAR) {
      open = "$$";
      close = "$$";
      display = true;
      last = closersOf(state).double;
    } else {
      const after = src.charCodeAt(start + 1);
      if (Number.isNaN(after) || isSpace(after)) return false;
      open = "$";
      close = "$";
      display = false;
      last = Number.POSITIVE_INFINITY;
    }
  } else {
    return false;
  }
  const from = start + open.length;
  let end = -1;
  if (last >= from) end = open === "$" ? nextDollarCloser(src, from) : src.indexOf(close, from);
  if (end === -1 || end > state.posMax) return pending(state, silent, start, open);
  const content = src.slice(from, end);
  if (content.trim() === "") return false;
  if (!silent) {
    const token = state.push("math_inline", "math", 0);
    token.content = content;
    token.markup = open;
    token.meta = { display, closed: true, source: src.slice(start, end + close.length) };
  }
  state.pos = end + close.length;
  return true;
}

/** The next unescaped `$` from `from` when it may close a formula (rule 1), else -1. */
function nextDollarCloser(src, from) {
  let i = src.indexOf("$", from);
  while (i !== -1 && src.charCodeAt(i - 1) === BACKSLASH) i = src.indexOf("$", i + 1);
  return i !== -1 && closesDollar(src, i) ? i : -1;
}

// A lone `$` is only "math in flight" when what follows looks like TeX.
const TEX_HINT = /[\\^_{]/;

function pending(state, silent, start, open) {
  const env = state.env ?? {};
  if (!env.streaming || state.src !== env.tail) return false;
  const rest = state.src.slice(start, state.posMax);
  if (open === "$" && !TEX_HINT.test(rest)) return false;
  if (!silent) {
    const token = state.push("math_pending", "", 0);
    token.content = rest;
  }
  state.pos = state.posMax;
  return true;
}

// ---- blocks --------------------------------------------------------------

function lineText(state, line) {
  return state.src.slice(state.bMarks[line] + state.tShift[line], state.eMarks[line]);
}

function mathBlock(state, startLine, endLine, silent) {
  if (state.sCount[startLine] - state.blkIndent >= 4) return false;
  const first = lineText(state, startLine);
  let open;
  if (first.startsWith("$$")) open = "$$";
  else if (first.startsWith("\\[")) open = "\\[";
  else return false;
  const close = open === "$$" ? "$$" : "\\]";
  const rest = first.slice(open.length);
  const lines = [];
  let closed = false;
  let line = startLine;
  const sameLine = rest.indexOf(close);
  if (sameLine !== -1) {
    // `$$ x $$` on one line: a block only when nothing follows the closer.
    if (rest.slice(sameLine + close.length).trim() !== "") return false;
    lines.push(rest.slice(0, sameLine));
    closed = true;
  } else {
    lines.push(rest);
    for (line = startLine + 1; line < endLine; line += 1) {
      if (state.sCount[line] < state.blkIndent && !state.isEmpty(line)) break;
      const text = lineText(state, line);
      const trimmed = text.trimEnd();
      if (trimmed.endsWith(close)) {
        lines.push(trimmed.slice(0, trimmed.length - close.length));
        closed = true;
        break;
      }
      lines.push(text);
    }
    if (!closed) {
      // Rule 3: only text still being written may end inside a formula.
      if (!state.env?.streaming) return false;
      line -= 1;
    }
  }
  if (silent) return true;
  state.line = line + 1;
  const token = state.push("math_block", "math", 0);
  token.block = true;
  token.content = lines.join("\n").trim();
  token.markup = open;
  token.map = [startLine, state.line];
  const source = state.getLines(startLine, state.line, state.sCount[startLine], false).replace(/\n$/, "");
  token.meta = { display: true, closed, source };
  return true;
}
