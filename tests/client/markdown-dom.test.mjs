import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { renderMarkdown } from "../../host/dsh/web/static/markdown-dom.js";
import { translator } from "../../host/dsh/web/static/i18n.js";
import { FakeDocument, descendants } from "./fake-dom.mjs";

function render(source, lang = "en") {
  const document = new FakeDocument();
  return { document, root: renderMarkdown(document, source, { t: translator(lang) }) };
}

const tags = (root) => descendants(root).map((element) => element.localName);

test("blocks become plain semantic elements", () => {
  const { root } = render("# Title\n\nA *b* **c** ~~d~~ `e`.\n\n> quote\n\n- one\n- two\n\n3. three\n\n---\n\n###### small");
  assert.equal(root.localName, "div");
  assert.equal(root.getAttribute("class"), "md");
  assert.deepEqual(tags(root), [
    "h1",
    "p", "em", "strong", "del", "code",
    "blockquote", "p",
    "ul", "li", "li",
    "ol", "li",
    "hr",
    "h6",
  ]);
  assert.equal(root.querySelector("ol").getAttribute("start"), "3");
  assert.equal(root.querySelector("ul").getAttribute("start"), null);
  assert.equal(root.querySelector("li").textContent, "one", "tight items hold their text directly");
});

test("loose list items keep their paragraphs", () => {
  const { root } = render("- one\n\n- two");
  assert.deepEqual(tags(root), ["ul", "li", "p", "li", "p"]);
});

test("a code block is pre > code with its language and a copy button", () => {
  const { root } = render("```js\nconst a = '<img src=x onerror=alert(1)>';\n```");
  const block = root.querySelector("[data-role=code-block]");
  const code = block.querySelector("pre code");
  assert.equal(code.textContent, "const a = '<img src=x onerror=alert(1)>';");
  assert.equal(code.getAttribute("class"), "language-js");
  assert.equal(code.children.length, 0, "code is one text node");
  const copy = block.querySelector("[data-action=copy]");
  assert.equal(copy.localName, "button");
  assert.equal(copy.getAttribute("type"), "button");
  assert.equal(copy.textContent, "Copy");
  assert.equal(block.querySelector(".code-lang").textContent, "js");
  assert.equal(render("```\nx\n```", "zh").root.querySelector("[data-action=copy]").textContent, "复制");
});

test("links open in a new tab without a referrer or opener", () => {
  const { root } = render('[docs](https://example.org/a "Docs") and https://b.example/x.');
  const anchors = root.querySelectorAll("a");
  assert.equal(anchors.length, 2);
  for (const a of anchors) {
    assert.equal(a.getAttribute("rel"), "noopener noreferrer");
    assert.equal(a.getAttribute("target"), "_blank");
  }
  assert.equal(anchors[0].getAttribute("href"), "https://example.org/a");
  assert.equal(anchors[0].getAttribute("title"), "Docs");
  assert.equal(anchors[1].getAttribute("href"), "https://b.example/x");
  assert.equal(anchors[1].getAttribute("title"), null);
  assert.equal(root.textContent, "docs and https://b.example/x.");
});

test("tables scroll in their own box and carry alignment as classes", () => {
  const { root } = render("| a | b |\n|---|--:|\n| 1 | 2 |");
  const wrap = root.querySelector(".table-wrap");
  assert.ok(wrap);
  assert.deepEqual(tags(wrap), ["table", "thead", "tr", "th", "th", "tbody", "tr", "td", "td"]);
  assert.equal(wrap.querySelectorAll("th")[0].getAttribute("class"), null);
  assert.equal(wrap.querySelectorAll("td")[1].getAttribute("class"), "align-right");
  assert.deepEqual(tags(render("| a |\n|---|").root), ["div", "table", "thead", "tr", "th"], "no empty tbody");
});

test("hostile input renders as text: no element but the markdown ones, no unsafe href", () => {
  const payloads = [
    "<img src=x onerror=alert(1)>",
    "<script>alert(2)</script>",
    '"><svg onload=alert(3)>',
    "[a](javascript:alert(4))",
    "[b](JaVaScRiPt:alert(5))",
    "[c](data:text/html,<script>alert(6)</script>)",
    "<javascript:alert(7)>",
    "[d](<javascript:alert(8)>)",
    "[e](vbscript:x)",
    '<a href="javascript:alert(9)">f</a>',
    "`<iframe src=javascript:alert(10)>`",
    "```html\n<style>*{display:none}</style>\n```",
    "**<b>**_<i>_",
  ];
  const { document, root } = render(payloads.join("\n\n"));
  const allowed = new Set(["p", "code", "pre", "div", "span", "button", "strong", "em"]);
  assert.deepEqual([...new Set(document.created)].filter((tag) => !allowed.has(tag)), []);
  assert.equal(root.querySelectorAll("a").length, 0);
  for (const element of descendants(root)) {
    for (const name of element.attributes.keys()) assert.ok(!name.startsWith("on"), name);
  }
  const shown = root.textContent;
  for (const payload of payloads.slice(0, 10)) assert.ok(shown.includes(payload), payload);
  assert.ok(shown.includes("<iframe src=javascript:alert(10)>"));
  assert.ok(shown.includes("<style>*{display:none}</style>"));
  assert.equal(root.querySelector("strong").textContent, "<b>");
  assert.equal(root.querySelector("em").textContent, "<i>");
});

test("huge input builds without recursion trouble", () => {
  const source = `${"> ".repeat(5000)}x\n\n${"*a _b ".repeat(20_000)}y${" b_ a*".repeat(20_000)}`;
  const { root } = render(source);
  assert.ok(root.textContent.includes("y"));
});

test("what the subset used to miss: setext headings, indented code, entities, hard breaks", () => {
  const { root } = render("Title\n=====\n\nSub\n---\n\n    indented <code>\n\nTom &amp; Jerry &lt;3  \nnext");
  assert.deepEqual(tags(root), ["h1", "h2", "div", "div", "span", "button", "pre", "code", "p", "br"]);
  assert.equal(root.querySelector("pre code").textContent, "indented <code>");
  assert.equal(root.querySelector("p").textContent, "Tom & Jerry <3next");
});

test("task list items show a disabled checkbox, checked when done", () => {
  const { root } = render("- [x] done\n- [ ] open");
  const boxes = root.querySelectorAll("li.task input");
  assert.deepEqual(boxes.map((box) => [box.getAttribute("type"), box.hasAttribute("disabled"), box.hasAttribute("checked")]), [
    ["checkbox", true, true],
    ["checkbox", true, false],
  ]);
  assert.deepEqual(root.querySelectorAll("li").map((li) => li.textContent), ["done", "open"]);
});

test("an image is never loaded: it is a link to itself labelled with its alt text", () => {
  const { document, root } = render("![a chart](https://x.org/c.png) ![bad](javascript:alert(1))");
  assert.ok(!document.created.includes("img"));
  const link = root.querySelector("a.image-link");
  assert.equal(link.getAttribute("href"), "https://x.org/c.png");
  assert.equal(link.textContent, "a chart");
  assert.equal(root.querySelectorAll("a").length, 1);
});

test("math renders as MathML elements, inline and display, in all four spellings", () => {
  const { root } = render("Inline $e^{i\\pi}+1=0$ and \\(a_1\\).\n\n$$\n\\frac{a}{b}\n$$\n\n\\[\n\\sqrt{2}\n\\]");
  const maths = root.querySelectorAll("math");
  assert.equal(maths.length, 4);
  assert.deepEqual(maths.map((math) => math.getAttribute("display")), [null, null, "block", "block"]);
  for (const math of maths) assert.equal(math.namespaceURI, "http://www.w3.org/1998/Math/MathML");
  assert.ok(root.querySelector("mfrac"));
  assert.ok(root.querySelector("msqrt"));
  assert.equal(root.querySelectorAll(".math-block").length, 2);
});

test("dollars in prose stay text", () => {
  for (const source of ["It costs $5 and $10.", "Pay $ 5 or $6$7", "a $b $ c", "\\$x$ is escaped", "US$20 vs $30."]) {
    const { root } = render(source);
    assert.equal(root.querySelectorAll("math").length, 0, source);
  }
  assert.equal(render("It costs $5 and $10.").root.textContent, "It costs $5 and $10.");
});

test("a formula KaTeX refuses shows its source as code", () => {
  const { root } = render("see $\\frac{a$ and $$\\undefinedcommand$$ end\n\n$$\n\\begin{x}\n$$");
  const sources = root.querySelectorAll("code.math-source");
  assert.deepEqual(sources.map((code) => code.textContent), ["$\\frac{a$", "$$\\undefinedcommand$$", "$$\n\\begin{x}\n$$"]);
  assert.equal(root.querySelectorAll("math").length, 0);
  assert.ok(sources[0].getAttribute("title").length > 0, "KaTeX's message is the title");
});

test("hostile math yields only allowlisted MathML: no link, action, style or handler survives", () => {
  const payloads = [
    "$\\href{javascript:alert(1)}{x}$",
    "$\\url{javascript:alert(2)}$",
    "$\\includegraphics{https://x.org/i.png}$",
    "$\\htmlClass{x}{y}\\htmlStyle{color:red}{z}\\htmlId{i}{j}\\htmlData{onerror=alert(3)}{k}$",
    "$\\color{red\" onerror=\"alert(4)}{x}$",
    "$\\text{<img src=x onerror=alert(5)>}$",
    "$\\mathrm{<script>alert(6)</script>}$",
    "$$\\def\\a{\\a\\a}\\a$$",
    "$\\rule{10000em}{10000em}$",
  ];
  const { document, root } = render(payloads.join("\n\n"));
  const allowedAttributes = new Set([
    "dir", "class", "title", "display", "encoding", "mathvariant", "stretchy", "fence", "separator", "lspace",
    "rspace", "width", "height", "depth", "mathcolor", "mathbackground", "linethickness", "notation",
    "voffset", "minsize", "maxsize", "scriptlevel", "displaystyle", "accent", "accentunder",
  ]);
  for (const element of descendants(root)) {
    for (const name of element.attributes.keys()) assert.ok(allowedAttributes.has(name), `${element.localName}[${name}]`);
    assert.ok(!["maction", "mglyph", "a", "img", "script", "style", "svg"].includes(element.localName), element.localName);
  }
  assert.ok(!document.created.includes("a"));
  for (const element of descendants(root)) {
    const color = element.getAttribute("mathcolor");
    if (color !== null) assert.match(color, /^(#[0-9a-f]{3,8}|[a-z]+)$/i);
  }
  assert.ok(root.textContent.includes("<img src=x onerror=alert(5)>"), "markup in \\text is text");
});

test("a formula too long or nested too deep shows its source", () => {
  const long = `$${"x+".repeat(5000)}x$`;
  assert.equal(render(long).root.querySelector("code.math-source").textContent, long);
  const deep = `$${"{".repeat(3000)}x${"}".repeat(3000)}$`;
  assert.equal(render(deep).root.querySelectorAll("math").length, 0);
});

describe("streaming: every prefix of an answer renders without flicker into garbage", () => {
  const answer = [
    "Here is the table:",
    "",
    "| name | value |",
    "|:-----|------:|",
    "| a_1  | **2** |",
    "",
    "The formula $\\sum_{i=1}^{n} x_i^2$ and",
    "",
    "$$",
    "\\int_0^1 f(x)\\,dx = F(1) - F(0)",
    "$$",
    "",
    "```python",
    "print('*not em*')",
    "```",
  ].join("\n");

  const streamed = (prefix) => renderMarkdown(new FakeDocument(), prefix, { streaming: true });

  test("no heading appears, TeX never becomes emphasis, and each construct appears once it is whole", () => {
    let sawTable = false;
    for (let end = 1; end <= answer.length; end += 1) {
      const prefix = answer.slice(0, end);
      const root = streamed(prefix);
      const names = descendants(root).map((element) => element.localName);
      assert.ok(!names.some((name) => /^h[1-6]$/.test(name)), `heading at ${JSON.stringify(prefix.slice(-20))}`);
      for (const element of root.querySelectorAll("em, strong")) {
        assert.ok(!/[\\_^{}]/.test(element.textContent), `TeX as emphasis at ${JSON.stringify(prefix.slice(-20))}`);
      }
      if (root.querySelector("table")) {
        sawTable = true;
        assert.equal(root.querySelectorAll("th").length, 2, "a table always has its two columns");
      }
      const tableComplete = prefix.includes("|:-----|-"); // a delimiter cell per column
      assert.equal(Boolean(root.querySelector("table")), tableComplete, `table at ${JSON.stringify(prefix.slice(-20))}`);
      const inlineClosed = prefix.includes("x_i^2$");
      const displayClosed = /\$\$\n[^$]*\n\$\$/.test(prefix);
      assert.equal(root.querySelectorAll("math").length, Number(inlineClosed) + Number(displayClosed), JSON.stringify(prefix.slice(-30)));
      if (prefix.includes("$$\n") && !displayClosed) assert.ok(root.querySelector("pre.math-source"), "an open display formula shows its source");
      for (const code of root.querySelectorAll("code.math-source")) assert.ok(!code.parentNode.matches("pre") || code.textContent.startsWith("$$"));
    }
    assert.ok(sawTable);
    const last = streamed(answer);
    assert.equal(last.querySelector("pre code.language-python").textContent, "print('*not em*')");
  });

  test("a finished answer renders as the streamed one ends", () => {
    const finished = (source) => descendants(renderMarkdown(new FakeDocument(), source)).map((element) => element.localName);
    assert.deepEqual(descendants(streamed(answer)).map((element) => element.localName), finished(answer));
  });
});
