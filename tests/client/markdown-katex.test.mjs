import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { MAX_FORMULA } from "../../host/dsh/web/static/markdown-math.js";
import { renderMath } from "../../host/dsh/web/static/markdown-katex.js";
import katex from "../../host/dsh/web/static/vendor/katex/katex.mjs";
import MarkdownIt from "../../host/dsh/web/static/vendor/markdown-it/markdown-it.mjs";
import { FakeDocument, descendants } from "./fake-dom.mjs";

const MATHML = "http://www.w3.org/1998/Math/MathML";
const vendored = (name) => readFileSync(new URL(`../../host/dsh/web/static/vendor/${name}/VERSION`, import.meta.url), "utf8");
const pinned = readFileSync(new URL("../../scripts/vendor-refresh", import.meta.url), "utf8");

function math(tex, options) {
  const document = new FakeDocument();
  return { document, element: renderMath(document, tex, options) };
}

test("the vendored builds are the pinned versions, loaded as ES modules with no install", () => {
  assert.match(pinned, /KATEX="katex@0\.19\.1"/);
  assert.match(vendored("katex"), /^package: {3}katex@0\.19\.1$/m);
  assert.equal(katex.version, "0.19.1");
  assert.equal(typeof katex.__renderToDomTree, "function", "the tree API this module walks");
  assert.match(pinned, /MARKDOWN_IT="markdown-it@15\.0\.3"/);
  assert.match(vendored("markdown-it"), /^package: {3}markdown-it@15\.0\.3$/m);
  assert.equal(typeof new MarkdownIt().parse, "function");
  assert.equal(globalThis.katex, undefined, "the ES module wrapper sets no global");
});

test("TeX becomes MathML elements in the MathML namespace, display or inline", () => {
  const { element } = math("\\frac{a}{b} + \\sqrt{x_1}", { display: true });
  assert.equal(element.localName, "math");
  assert.equal(element.namespaceURI, MATHML);
  assert.equal(element.getAttribute("display"), "block");
  for (const child of descendants(element)) assert.equal(child.namespaceURI, MATHML, child.localName);
  assert.deepEqual(["mfrac", "msqrt", "msub"].map((name) => element.querySelectorAll(name).length), [1, 1, 1]);
  assert.equal(math("x").element.getAttribute("display"), null);
  assert.equal(element.querySelector("annotation").textContent, "\\frac{a}{b} + \\sqrt{x_1}");
});

test("a formula is built again from its remembered tree: equal MathML, new elements", () => {
  const document = new FakeDocument();
  const first = renderMath(document, "\\frac{1}{2}");
  const second = renderMath(document, "\\frac{1}{2}");
  assert.notEqual(first, second);
  assert.deepEqual(descendants(second).map((node) => node.localName), descendants(first).map((node) => node.localName));
  assert.equal(renderMath(document, "\\frac{1").localName, "code", "a refusal is remembered as one");
  assert.equal(renderMath(document, "\\frac{1").localName, "code");
});

test("a formula KaTeX refuses, too long or too deep, shows its source as code with the reason", () => {
  for (const [tex, reason] of [
    ["\\frac{a", /KaTeX parse error/],
    ["\\nosuchcommand", /Undefined control sequence/],
    ["x".repeat(MAX_FORMULA + 1), /too long/],
    [`${"{".repeat(2000)}x${"}".repeat(2000)}`, /./],
    ["\\def\\a{\\a\\a}\\a", /Too many expansions/],
  ]) {
    const { element } = math(tex, { source: `$${tex}$` });
    assert.equal(element.localName, "code", tex.slice(0, 20));
    assert.equal(element.getAttribute("class"), "math-source");
    assert.equal(element.textContent, `$${tex}$`);
    assert.match(element.getAttribute("title"), reason);
  }
});

test("only allowlisted elements and attribute values are built, whatever the TeX asks for", () => {
  const hostile = [
    "\\href{javascript:alert(1)}{x}",
    "\\url{javascript:alert(1)}",
    "\\htmlData{onerror=alert(1)}{x}",
    "\\htmlStyle{background:url(https://x.org)}{x}",
    "\\includegraphics[height=1em]{https://x.org/i.png}",
    "\\color{#ff0000}{r}\\colorbox{red}{b}\\textcolor{blue}{c}",
    "\\text{<math><maction actiontype=\"statusline\" xlink:href=\"javascript:alert(1)\">x</maction></math>}",
    "\\begin{array}{c|c}a&b\\\\\\hline c&d\\end{array}",
    "\\rule{1em}{1em}\\kern{2em}\\raisebox{1em}{x}\\overbrace{a}\\cancel{b}\\boxed{c}",
  ];
  for (const tex of hostile) {
    const { document, element } = math(tex);
    for (const node of [element, ...descendants(element)]) {
      assert.equal(node.namespaceURI ?? MATHML, MATHML, `${tex}: ${node.localName}`);
      assert.ok(!["maction", "mglyph", "a", "img", "svg"].includes(node.localName), `${tex}: ${node.localName}`);
      for (const [name, value] of node.attributes) {
        assert.ok(!/^(on|href|xlink|style|src|actiontype|class|id|data-)/.test(name), `${tex}: ${node.localName}[${name}]`);
        assert.doesNotMatch(value, /javascript|url\(|[<>"]/i, `${tex}: ${name}=${value}`);
      }
    }
    assert.ok(!document.created.some((name) => ["a", "img", "script", "style"].includes(name)), tex);
  }
  const colored = math("\\color{#ff0000}{r}").element;
  assert.ok(colored.querySelector("[mathcolor]"), "harmless values pass");
});

test("the allowlists hold even if KaTeX's tree carried links, actions, styles or handlers", (context) => {
  const node = (type, attributes = {}, children = []) => ({ type, attributes, children, classes: [] });
  const text = (value) => ({ text: value });
  let tree = null;
  const original = katex.__renderToDomTree;
  context.after(() => {
    katex.__renderToDomTree = original;
  });
  katex.__renderToDomTree = () => ({ classes: ["katex"], children: [tree] });

  tree = node("math", { display: "block", xmlns: MATHML, onload: "alert(1)" }, [
    node("mrow", { href: "javascript:alert(1)", "xlink:href": "javascript:alert(2)", style: "color:red", actiontype: "toggle" }, [
      node("mi", { mathvariant: "normal", mathcolor: "red;background:url(x)" }, [text("x")]),
      node("mspace", { width: "1em", height: "javascript:1" }),
      { width: 0.1666, character: "\u2009" },
      { width: 2, character: null },
    ]),
  ]);
  const { element } = math("\\patched");
  assert.equal(element.localName, "math");
  const attributes = [element, ...descendants(element)].map((item) => [item.localName, Object.fromEntries(item.attributes)]);
  assert.deepEqual(attributes, [
    ["math", { display: "block" }],
    ["mrow", {}],
    ["mi", { mathvariant: "normal" }],
    ["mspace", { width: "1em" }],
    ["mspace", { width: "2em" }],
  ]);
  assert.equal(element.textContent, "x\u2009");

  for (const forbidden of ["maction", "mglyph", "a", "script", "svg", "annotation-xml"]) {
    tree = node("math", {}, [node("mrow", {}, [node(forbidden, {}, [text("x")])])]);
    // A new TeX string each time: KaTeX's trees are remembered per formula.
    const { document, element: refused } = math(`y_{${forbidden}}`, { source: "$y$" });
    assert.equal(refused.localName, "code", forbidden);
    assert.equal(refused.textContent, "$y$");
    assert.ok(!document.created.includes(forbidden), forbidden);
  }
});

test("the vendored libraries neither parse HTML nor evaluate code (the page's CSP allows no eval)", () => {
  const banned = [
    /\.innerHTML\b/,
    /\.outerHTML\b/,
    /insertAdjacentHTML/,
    /\beval\s*\(/,
    /new Function\b/,
    /document\.write/,
    /createContextualFragment/,
    /DOMParser/,
  ];
  for (const file of ["katex/katex.mjs", "markdown-it/markdown-it.mjs"]) {
    const source = readFileSync(new URL(`../../host/dsh/web/static/vendor/${file}`, import.meta.url), "utf8");
    for (const pattern of banned) assert.doesNotMatch(source, pattern, `${file} uses ${pattern}`);
  }
});
