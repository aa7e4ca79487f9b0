// Links in markdown: which destinations may become an `href` (absolute
// http, https and mailto URLs only), where an inline link's destination and
// title end, and where a bare URL ends. Looking for a link's end and failing
// is the one scan that can revisit text ("[](" repeated), so each paragraph
// gets a budget for those scans, proportional to its length: ordinary text
// never exhausts it; once hostile text has, its remaining brackets stay text.

/** How far a link destination, title or <autolink> is looked for. */
export const MAX_LINK_SCAN = 2048;
const LINK_BUDGET_PER_CHAR = 4;
const LINK_BUDGET_BASE = 4096;
const SCHEMES = ["http:", "https:", "mailto:"];

/** ASCII punctuation: what a backslash escapes. */
export const ESCAPABLE = /[!-/:-@[-`{-~]/;

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

/** The link-scan budget of a paragraph of `length` characters; `tick` meters each step. */
export function linkBudget(length, tick) {
  return { left: LINK_BUDGET_BASE + LINK_BUDGET_PER_CHAR * length, tick };
}

/** One step of a link scan; false once the paragraph's budget is spent. */
export function spend(budget) {
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
export function linkTarget(text, pos, budget) {
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
export function trimUrlEnd(text, start, end, tick) {
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
