// The CommonMark spec's examples (npm commonmark-spec, vendored with its
// licence by scripts/vendor-refresh) through parse and render: the rendered
// DOM, serialised and normalised, against the spec's HTML. What differs on
// purpose is left out or counted as such:
// - raw HTML is text here (`html: false`), so "HTML blocks" and "Raw HTML"
//   are not rendered constructs, nor are "Images" (never loaded: a link);
// - links keep only absolute http, https and mailto destinations, so the
//   examples linking to `/uri` or `foo` keep their brackets as text.
// Each section's passing examples must not fall below its floor; examples
// failing for any other reason are listed (run with COMMONMARK_REPORT=1).
// Measured with markdown-it 15.0.3: 440 of 566 pass, 121 differ by design,
// and 5 fail: #12 (`\[…\]` read as math), #144 (a code block's language
// label keeps letters, digits and `_+#.-` only), #602, #608 and #611
// (GFM's bare-URL links, which CommonMark alone does not have).

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { renderMarkdown } from "../../host/dsh/web/static/markdown-dom.js";
import { safeHref } from "../../host/dsh/web/static/markdown-links.js";
import { FakeDocument } from "./fake-dom.mjs";

const examples = JSON.parse(readFileSync(new URL("./vendor/commonmark-spec/spec.json", import.meta.url), "utf8"));

const NOT_RENDERED = new Set(["HTML blocks", "Raw HTML", "Images"]);
const BLOCK = "p|h[1-6]|ul|ol|li|blockquote|pre|hr|table|thead|tbody|tr|th|td";
const VOID = new Set(["hr", "br", "input"]);

/** Passing examples per section, at least. */
const FLOORS = {
  "Tabs": 11,
  "Backslash escapes": 9,
  "Entity and numeric character references": 14,
  "Precedence": 1,
  "Thematic breaks": 19,
  "ATX headings": 18,
  "Setext headings": 27,
  "Indented code blocks": 12,
  "Fenced code blocks": 28,
  "Link reference definitions": 6,
  "Paragraphs": 8,
  "Blank lines": 1,
  "Block quotes": 25,
  "List items": 48,
  "Lists": 23,
  "Inlines": 1,
  "Code spans": 21,
  "Emphasis and strong emphasis": 123,
  "Links": 15,
  "Autolinks": 12,
  "Hard line breaks": 13,
  "Soft line breaks": 2,
  "Textual content": 3,
};

function escapeText(text) {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** The DOM as the spec's HTML would spell it: our wrappers, copy buttons and bidi attributes left out. */
function serialise(node) {
  if (node.nodeType === 3) return escapeText(node.data);
  const name = node.localName;
  if (name === "div" && node.getAttribute("class") === "code-block") return serialise(node.querySelector("pre"));
  if (name === "div") return node.childNodes.map(serialise).join("");
  const attributes = [...node.attributes]
    .filter(([key]) => !["dir", "rel", "target"].includes(key))
    .map(([key, value]) => ` ${key}="${escapeText(value)}"`)
    .join("");
  if (VOID.has(name)) return `<${name}${attributes} />`;
  let inner = node.childNodes.map(serialise).join("");
  // The builder drops the code block's last newline (the copy button copies the code as shown).
  if (name === "code" && node.parentNode?.localName === "pre" && inner !== "") inner += "\n";
  return `<${name}${attributes}>${inner}</${name}>`;
}

const MARKDOWN_TAGS = new Set(["p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote", "pre", "code", "hr", "br", "em", "strong", "a"]);

/**
 * True when the example holds what this renderer refuses on purpose: raw
 * HTML, a comment or declaration, an image, or a link or reference
 * definition outside the allowlist.
 */
function differsByDesign({ markdown, html }) {
  if (/<[!?]/.test(html)) return true;
  // A reference definition with a refused destination is no definition: it stays text.
  for (const [, href] of markdown.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?([^\s>]*)/gm)) if (safeHref(href) === null) return true;
  for (const [, name] of html.matchAll(/<\/?([a-zA-Z][\w-]*)/g)) if (!MARKDOWN_TAGS.has(name.toLowerCase())) return true;
  for (const [, href] of html.matchAll(/ href="([^"]*)"/g)) if (safeHref(decodeEntities(href)) === null) return true;
  return false;
}

function decodeEntities(text) {
  return text.replace(/&quot;/g, '"').replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}

function normalise(html) {
  return html
    // An allowed href is set as the URL parser spells it ("http://x" → "http://x/").
    .replace(/ href="([^"]*)"/g, (whole, href) => {
      const safe = safeHref(decodeEntities(href));
      return safe === null ? whole : ` href="${escapeText(safe)}"`;
    })
    .replace(/<br \/>\n/g, "<br />")
    .replace(new RegExp(`\\n(?=</?(${BLOCK})\\b)`, "g"), "")
    .replace(new RegExp(`(<(${BLOCK})\\b[^>]*>|</(${BLOCK})>|<hr />)\\n`, "g"), "$1")
    .trim();
}

function run(example) {
  const markdown = example.markdown.replace(/→/g, "\t");
  const expected = normalise(example.html.replace(/→/g, "\t"));
  const root = renderMarkdown(new FakeDocument(), markdown);
  const actual = normalise(root.childNodes.map(serialise).join(""));
  return { pass: actual === expected, expected, actual };
}

test("the CommonMark examples of the constructs rendered pass, per section", () => {
  const sections = new Map();
  for (const example of examples) {
    if (NOT_RENDERED.has(example.section)) continue;
    const entry = sections.get(example.section) ?? { pass: 0, total: 0, byDesign: 0, failing: [] };
    const { pass } = run(example);
    entry.total += 1;
    if (pass) entry.pass += 1;
    else if (differsByDesign(example)) entry.byDesign += 1;
    else entry.failing.push(example.number);
    sections.set(example.section, entry);
  }
  let pass = 0;
  let total = 0;
  let byDesign = 0;
  const lines = [];
  for (const [section, entry] of sections) {
    pass += entry.pass;
    total += entry.total;
    byDesign += entry.byDesign;
    const failing = entry.failing.length ? `; failing ${entry.failing.join(", ")}` : "";
    lines.push(`${section}: ${entry.pass}/${entry.total} (${entry.byDesign} differ by design${failing})`);
  }
  const share = (part, whole) => `${((100 * part) / whole).toFixed(1)} %`;
  lines.push(`all rendered sections: ${pass}/${total} = ${share(pass, total)}`);
  lines.push(`without the examples that differ by design: ${pass}/${total - byDesign} = ${share(pass, total - byDesign)}`);
  if (process.env.COMMONMARK_REPORT) console.log(lines.join("\n"));
  for (const [section, entry] of sections) {
    assert.ok(entry.pass >= (FLOORS[section] ?? 0), `${section}: ${entry.pass}/${entry.total} passed, floor ${FLOORS[section]}`);
  }
});
