import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { parseMarkdown } from "../../host/dsh/web/static/markdown.js";

/** The math tokens of `source`: `[type, content, display]`. */
function maths(source, options) {
  const found = [];
  for (const token of parseMarkdown(source, options)) {
    for (const child of [token, ...(token.children ?? [])]) {
      if (child.type.startsWith("math")) found.push([child.type, child.content, child.meta?.display ?? null]);
    }
  }
  return found;
}

describe("inline math", () => {
  test("the four spellings, with what each delimits", () => {
    assert.deepEqual(maths("$a$ \\(b\\) $$c$$ \\[d\\]"), [
      ["math_inline", "a", false],
      ["math_inline", "b", false],
      ["math_inline", "c", true],
      ["math_inline", "d", true],
    ]);
  });

  test("a single dollar opens only before a non-space and closes only after one, never before a digit", () => {
    for (const source of ["$5 and $10", "$ a$", "$a $", "a $b$5", "$$", "$ $", "\\$a$", "US$1,000 and $2,000"]) {
      assert.deepEqual(maths(source), [], source);
    }
    assert.deepEqual(maths("price $5, formula $x^2$"), [["math_inline", "x^2", false]]);
    assert.deepEqual(maths("$a \\$ b$"), [["math_inline", "a \\$ b", false]], "an escaped dollar is inside");
    assert.deepEqual(maths("$x^2$, $y$."), [
      ["math_inline", "x^2", false],
      ["math_inline", "y", false],
    ]);
  });

  test("code spans win over dollars, and markdown inside a formula is TeX, not emphasis", () => {
    assert.deepEqual(maths("`$a$` and $a_1 * b_2 * c$"), [["math_inline", "a_1 * b_2 * c", false]]);
    const inline = parseMarkdown("$a_1 * b_2$").find((token) => token.type === "inline");
    assert.deepEqual(inline.children.map((child) => child.type), ["math_inline"]);
  });

  test("a formula may span a soft line break", () => {
    assert.deepEqual(maths("\\(a +\nb\\)"), [["math_inline", "a +\nb", false]]);
  });
});

describe("display blocks", () => {
  test("$$ and \\[ blocks run to the line that ends with their closer, and may interrupt a paragraph", () => {
    const tokens = parseMarkdown("Text\n$$\na\n= b\n$$\n\\[\nc\n\\]\nafter");
    assert.deepEqual(tokens.map((token) => token.type), [
      "paragraph_open", "inline", "paragraph_close", "math_block", "math_block", "paragraph_open", "inline", "paragraph_close",
    ]);
    const blocks = tokens.filter((token) => token.type === "math_block");
    assert.deepEqual(blocks.map((token) => [token.content, token.meta.closed, token.meta.source]), [
      ["a\n= b", true, "$$\na\n= b\n$$"],
      ["c", true, "\\[\nc\n\\]"],
    ]);
  });

  test("a one-line block, and one whose closer ends its last line", () => {
    assert.deepEqual(maths("$$ x^2 $$"), [["math_block", "x^2", true]]);
    assert.deepEqual(maths("$$\nx^2 $$"), [["math_block", "x^2", true]]);
    assert.deepEqual(maths("$$a$$ then text").map(([type]) => type), ["math_inline"]);
  });

  test("inside quotes and list items", () => {
    assert.deepEqual(maths("> $$\n> q\n> $$\n\n- \\[\n  l\n  \\]"), [
      ["math_block", "q", true],
      ["math_block", "l", true],
    ]);
  });

  test("never closed, a block is no block: \\[ is also an escaped bracket", () => {
    assert.deepEqual(maths("\\[not a link](https://x.org)\n\nmore"), []);
    assert.deepEqual(maths("$$\nnever closed"), []);
    assert.deepEqual(maths("    $$\n    indented code\n    $$"), []);
  });
});

describe("streaming", () => {
  test("an open display block shows as its source until its closer arrives", () => {
    const tokens = parseMarkdown("Intro\n\n$$\n\\frac{a}{b", { streaming: true });
    const block = tokens.find((token) => token.type === "math_block");
    assert.deepEqual([block.meta.closed, block.meta.source], [false, "$$\n\\frac{a}{b"]);
  });

  test("an open inline formula in the last paragraph keeps the rest of it as text", () => {
    assert.deepEqual(maths("sum \\(a_1 + b_", { streaming: true }), [["math_pending", "\\(a_1 + b_", null]]);
    assert.deepEqual(maths("so $a_1 + b_", { streaming: true }), [["math_pending", "$a_1 + b_", null]]);
    assert.deepEqual(maths("costs $5 and *more*", { streaming: true }), [], "a price is no formula in flight");
    assert.deepEqual(maths("early \\(a_1\n\nlater", { streaming: true }), [], "only the last paragraph is in flight");
    assert.deepEqual(maths("sum \\(a_1 + b_"), [], "a finished answer keeps the text as markdown");
  });
});
