import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { MAX_NESTING, parseMarkdown, safeHref } from "../../host/dsh/web/static/markdown.js";

const types = (source, options) => parseMarkdown(source, options).map((token) => token.type);
const inlineOf = (source) => parseMarkdown(source).find((token) => token.type === "inline").children;
const hrefs = (source) =>
  parseMarkdown(source)
    .flatMap((token) => token.children ?? [])
    .filter((token) => token.type === "link_open")
    .map((token) => token.attrGet("href"));
const texts = (source) => inlineOf(source).filter((token) => token.type === "text").map((token) => token.content).join("");

describe("the parser's set-up", () => {
  test("raw HTML is never markup: it stays text as written", () => {
    for (const source of ["<b>bold</b>", "<div onclick=x>", "<!-- c -->", "<script>alert(1)</script>"]) {
      const tokens = parseMarkdown(source);
      assert.ok(tokens.every((token) => !token.type.startsWith("html")), source);
      assert.equal(tokens.flatMap((token) => token.children ?? []).map((child) => child.content).join(""), source);
    }
  });

  test("entities are decoded into text", () => {
    assert.equal(texts("&amp; &lt;b&gt; &copy; &#35;"), "& <b> © #");
  });

  test("bare URLs become links only with their scheme", () => {
    assert.deepEqual(hrefs("see https://b.org/q?x=1. and www.d.org and example.com and me@x.org"), ["https://b.org/q?x=1"]);
  });

  test("task list items are marked on their list item, the marker left out of the text", () => {
    const tokens = parseMarkdown("- [ ] open\n- [x] done\n- [y] neither\n- [ ]");
    const items = tokens.filter((token) => token.type === "list_item_open").map((token) => token.meta?.task ?? null);
    assert.deepEqual(items, ["open", "done", null, "open"]);
    assert.equal(tokens.filter((token) => token.type === "inline")[0].children[0].content, "open");
  });

  test("blocks nest up to markdown-it's bound", () => {
    const tokens = parseMarkdown(`${"> ".repeat(MAX_NESTING + 50)}deep`);
    assert.equal(tokens.filter((token) => token.type === "blockquote_open").length, MAX_NESTING);
  });
});

describe("links", () => {
  const hostile = [
    "javascript:alert(1)",
    "JAVASCRIPT:alert(1)",
    " javascript:alert(1)",
    "java\tscript:alert(1)",
    "java&#115;cript:alert(1)",
    "vbscript:msgbox(1)",
    "data:text/html,<script>alert(1)</script>",
    "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
    "file:///etc/passwd",
    "//evil.example/x",
    "/relative",
    "#fragment",
    "https:evil",
    "http://",
    "https://exa mple.org",
    "https://x.org/\u0000",
  ];

  test("safeHref accepts only absolute http, https and mailto URLs", () => {
    for (const value of hostile) assert.equal(safeHref(value), null, JSON.stringify(value));
    assert.equal(safeHref("https://x.org/a?b=c#d"), "https://x.org/a?b=c#d");
    assert.equal(safeHref("HTTP://X.ORG"), "http://x.org/");
    assert.equal(safeHref("mailto:a@b.org"), "mailto:a@b.org");
  });

  test("a link to anything else is not a link: it stays text, exactly as written", () => {
    for (const target of hostile.filter((value) => !/[\s()\u0000<>]/.test(value))) {
      for (const source of [`[x](${target})`, `[x](<${target}>)`, `<${target}>`, `[x]\n\n[x]: ${target}`]) {
        assert.deepEqual(hrefs(source), [], source);
      }
    }
    assert.equal(texts("[link](javascript:alert(6))"), "[link](javascript:alert(6))");
  });

  test("links to http, https and mailto, inline, by reference and in angle brackets", () => {
    assert.deepEqual(hrefs('[a](https://x.org/p_(q) "T") [m](mailto:me@x.org) [r][1] <https://a.org/x>\n\n[1]: https://r.org'), [
      "https://x.org/p_(q)",
      "mailto:me@x.org",
      "https://r.org",
      "https://a.org/x",
    ]);
  });
});

describe("streaming", () => {
  test("an unfinished delimiter row under a table header is held back, never a setext heading", () => {
    for (const partial of ["-", "|-", "|--", "| --- |", "---|", "| :-: | "]) {
      const source = `| a | b |\n${partial}`;
      assert.deepEqual(types(source, { streaming: true }), ["paragraph_open", "inline", "paragraph_close"], partial);
    }
    assert.ok(types("| a | b |\n|---|---|", { streaming: true }).includes("table_open"));
    assert.ok(types("a | b\n--- | :-:", { streaming: true }).includes("table_open"));
    assert.ok(types("Title\n---", { streaming: false }).includes("heading_open"), "a finished answer keeps setext headings");
    assert.ok(types("Title\n---", { streaming: true }).includes("heading_open"), "a header without pipes is no table");
  });
});

describe("linear work on hostile input", () => {
  // The meter counts every parser rule call and every token: work per input
  // character must not grow with the input (a quadratic rule would multiply
  // it by four here). markdown-it's own loops inside one rule are not
  // counted; bench/markdown.mjs times the same inputs.
  const cases = {
    "unclosed emphasis": (n) => "*a ".repeat(n),
    "mixed openers": (n) => "**a *b _c ~~d ".repeat(n),
    "deep nesting": (n) => `${"*_".repeat(n)}x${"_*".repeat(n)}`,
    "closers before openers": (n) => `${"a* ".repeat(n)}${"*a ".repeat(n)}`,
    "rule of three": (n) => "a**b*c".repeat(n),
    "open brackets then links": (n) => `${"[".repeat(n)}${"[a](https://x.org) ".repeat(n)}`,
    "unfinished link targets": (n) => "[](".repeat(n),
    "unfinished angle targets": (n) => "[a](<".repeat(n),
    "unfinished titles": (n) => '[a](https://x.org "'.repeat(n),
    "backtick runs of every length": (n) => Array.from({ length: n }, (_, i) => `x${"`".repeat(1 + (i % 50))}`).join(""),
    "broken bare URLs": (n) => "http://[".repeat(n),
    "closing parentheses after a URL": (n) => `https://x.org${")".repeat(n)}`,
    "angle brackets": (n) => "<a".repeat(n),
    "nested quotes": (n) => `${"> ".repeat(n)}x`,
    "staircase lists": (n) => Array.from({ length: n }, (_, i) => `${"  ".repeat(i % 30)}- x`).join("\n"),
    "long table": (n) => `|a|b|\n|-|-|\n${"|1|2|\n".repeat(n)}`,
    "unclosed fence": (n) => `\`\`\`\n${"x\n".repeat(n)}`,
    "heading of hashes": (n) => `# ${"#".repeat(n)} x`,
    "spaces": (n) => `${" ".repeat(n)}x${" ".repeat(n)}`,
    "dollar openers without closers": (n) => "$a ".repeat(n),
    "prices": (n) => "costs $5 and $10 ".repeat(n),
    "inline math openers": (n) => "\\(a $$b \\[c ".repeat(n),
    "unclosed display math": (n) => `$$\n${"x_1\n".repeat(n)}`,
    "many formulas": (n) => "$x^2$ and \\(y_1\\) ".repeat(n),
  };

  for (const [name, make] of Object.entries(cases)) {
    test(name, () => {
      const perChar = [1500, 6000].map((n) => {
        const meter = { steps: 0 };
        const source = make(n);
        parseMarkdown(source, { meter });
        return meter.steps / source.length;
      });
      assert.ok(perChar[1] <= perChar[0] * 1.25 + 0.01, `${name}: ${perChar.join(" → ")} steps per character`);
    });
  }

  test("a megabyte of ordinary markdown parses", () => {
    const source = "Some **bold**, `code`, [a link](https://example.org), $x^2$ and _em_.\n".repeat(16_000);
    const meter = { steps: 0 };
    const tokens = parseMarkdown(source, { meter });
    assert.equal(tokens.filter((token) => token.type === "paragraph_open").length, 1);
    assert.ok(meter.steps < source.length * 2, `${meter.steps} steps`);
  });
});
