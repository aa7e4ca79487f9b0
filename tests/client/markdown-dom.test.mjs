import assert from "node:assert/strict";
import { test } from "node:test";

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
