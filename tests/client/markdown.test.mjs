import assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
  MAX_BLOCK_DEPTH,
  MAX_INLINE_DEPTH,
  parseInline,
  parseMarkdown,
  safeHref,
} from "../../host/dsh/web/static/markdown.js";

const blocks = (source) => parseMarkdown(source).children;
const inline = (source) => parseInline(source);
const text = (value) => ({ type: "text", text: value });

/** Everything a reader sees of an inline list, markers of kept text included. */
function plain(nodes) {
  return nodes.map((node) => (node.type === "text" || node.type === "code" ? node.text : plain(node.children))).join("");
}

function links(tree) {
  const found = [];
  const walk = (value) => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === "object") {
      if (value.type === "link") found.push(value.href);
      Object.values(value).forEach(walk);
    }
  };
  walk(tree);
  return found;
}

function depth(nodes) {
  let max = 0;
  for (const node of nodes) if (node.children) max = Math.max(max, 1 + depth(node.children));
  return max;
}

describe("blocks", () => {
  test("paragraphs are split by blank lines and keep their line breaks", () => {
    assert.deepEqual(blocks("one\n  two  \n\nthree"), [
      { type: "paragraph", children: [text("one\ntwo")] },
      { type: "paragraph", children: [text("three")] },
    ]);
  });

  test("ATX headings take one to six #s, a space, and an optional closing run", () => {
    assert.deepEqual(blocks("# One\n### Three ###\n###### Six\n####### seven\n#nospace"), [
      { type: "heading", level: 1, children: [text("One")] },
      { type: "heading", level: 3, children: [text("Three")] },
      { type: "heading", level: 6, children: [text("Six")] },
      { type: "paragraph", children: [text("####### seven\n#nospace")] },
    ]);
    assert.deepEqual(blocks("#"), [{ type: "heading", level: 1, children: [] }]);
    assert.deepEqual(blocks("## C# ##"), [{ type: "heading", level: 2, children: [text("C#")] }]);
  });

  test("fenced code keeps its text verbatim, with the info string's first word as language", () => {
    const source = "```python extra\nprint('<b>**x**</b>')\n\n  indented\n```\nafter";
    assert.deepEqual(blocks(source), [
      { type: "code", lang: "python", text: "print('<b>**x**</b>')\n\n  indented" },
      { type: "paragraph", children: [text("after")] },
    ]);
    assert.deepEqual(blocks("~~~~\n```\nstill code\n~~~~"), [{ type: "code", lang: "", text: "```\nstill code" }]);
    assert.deepEqual(blocks("```\nunclosed <script>"), [{ type: "code", lang: "", text: "unclosed <script>" }]);
    assert.deepEqual(blocks("  ```\n    two spaces kept\n  ```"), [{ type: "code", lang: "", text: "  two spaces kept" }]);
  });

  test("a language label keeps only safe characters", () => {
    assert.equal(blocks('```"><img src=x>\nx\n```')[0].lang, "img");
    assert.equal(blocks("```c++\nx\n```")[0].lang, "c++");
  });

  test("block quotes nest, take lazy continuation lines, and end at a blank line", () => {
    assert.deepEqual(blocks("> quoted\nlazy\n> > inner\n\nout"), [
      {
        type: "quote",
        children: [
          { type: "paragraph", children: [text("quoted\nlazy")] },
          { type: "quote", children: [{ type: "paragraph", children: [text("inner")] }] },
        ],
      },
      { type: "paragraph", children: [text("out")] },
    ]);
  });

  test("bullet and ordered lists, nested by indentation, tight unless items are apart", () => {
    const [list] = blocks("- a\n- b\n  - c\n  - d\n- e");
    assert.equal(list.type, "list");
    assert.equal(list.ordered, false);
    assert.equal(list.tight, true);
    assert.equal(list.items.length, 3);
    assert.equal(list.items[1][1].type, "list");
    assert.equal(list.items[1][1].items.length, 2);
    const [ordered] = blocks("3. three\n4. four");
    assert.deepEqual([ordered.ordered, ordered.start, ordered.items.length], [true, 3, 2]);
    const [loose] = blocks("1) one\n\n2) two");
    assert.equal(loose.tight, false);
    assert.equal(loose.items.length, 2);
  });

  test("a list needs its own marker: a change of bullet starts a new list", () => {
    const parsed = blocks("- a\n* b\n1. c");
    assert.deepEqual(parsed.map((block) => [block.type, block.ordered, block.items.length]), [
      ["list", false, 1],
      ["list", false, 1],
      ["list", true, 1],
    ]);
  });

  test("a list interrupts a paragraph only with content, and an ordered one only from 1", () => {
    assert.deepEqual(blocks("Steps:\n1. go").map((b) => b.type), ["paragraph", "list"]);
    assert.deepEqual(blocks("In\n2019. we").map((b) => b.type), ["paragraph"]);
    assert.deepEqual(blocks("word\n-").map((b) => b.type), ["paragraph"]);
  });

  test("list items continue with indented and lazy lines", () => {
    const [list] = blocks("- first\n  more\nlazy\n- second");
    assert.equal(list.items.length, 2);
    assert.deepEqual(list.items[0], [{ type: "paragraph", children: [text("first\nmore\nlazy")] }]);
  });

  test("tables need a matching delimiter row; alignment comes from its colons", () => {
    const [table] = blocks("| a | b | c |\n|:--|:-:|--:|\n| 1 | **2** | 3 \\| 4 |\n| only |");
    assert.equal(table.type, "table");
    assert.deepEqual(table.align, ["left", "center", "right"]);
    assert.deepEqual(table.head, [[text("a")], [text("b")], [text("c")]]);
    assert.deepEqual(table.rows[0][1], [{ type: "strong", children: [text("2")] }]);
    assert.deepEqual(table.rows[0][2], [text("3 | 4")]);
    assert.deepEqual(table.rows[1], [[text("only")], [], []], "short rows are padded");
    assert.deepEqual(blocks("a | b\n--- | ---").map((b) => b.type), ["table"]);
    assert.deepEqual(blocks("| a | b |\n|---|").map((b) => b.type), ["paragraph"], "column counts differ");
  });

  test("thematic breaks", () => {
    assert.deepEqual(blocks("a\n\n***\n- - -\n___"), [
      { type: "paragraph", children: [text("a")] },
      { type: "hr" },
      { type: "hr" },
      { type: "hr" },
    ]);
  });

  test("tabs indent like four spaces and CRLF line ends are accepted", () => {
    const [list] = blocks("- a\r\n\t- b\r\n");
    assert.equal(list.items[0][1].type, "list");
  });

  test("nesting deeper than the cap stays text", () => {
    const deep = `${"> ".repeat(MAX_BLOCK_DEPTH + 5)}bottom`;
    let node = blocks(deep)[0];
    let levels = 0;
    while (node.type === "quote") {
      levels += 1;
      node = node.children[0];
    }
    assert.equal(levels, MAX_BLOCK_DEPTH);
    assert.equal(plain(node.children), `${"> ".repeat(5)}bottom`);
  });
});

describe("inline", () => {
  test("emphasis, strong, both, strikethrough and code spans", () => {
    assert.deepEqual(inline("*a* _b_ **c** __d__ ***e*** ~~f~~ `g`"), [
      { type: "em", children: [text("a")] },
      text(" "),
      { type: "em", children: [text("b")] },
      text(" "),
      { type: "strong", children: [text("c")] },
      text(" "),
      { type: "strong", children: [text("d")] },
      text(" "),
      { type: "em", children: [{ type: "strong", children: [text("e")] }] },
      text(" "),
      { type: "del", children: [text("f")] },
      text(" "),
      { type: "code", text: "g" },
    ]);
  });

  test("underscores inside words and lone markers stay text", () => {
    assert.deepEqual(inline("snake_case_name 2 * 3 * 4 a ~ b"), [text("snake_case_name 2 * 3 * 4 a ~ b")]);
  });

  test("unclosed and badly nested emphasis keeps every character", () => {
    for (const source of ["**unclosed", "*a **b", "**a *b**", "*a **b* c**", "_a *b_ c*", "***", "~~a ~b~~"]) {
      assert.equal(plain(inline(source)).replace(/[*_~]/g, ""), source.replace(/[*_~]/g, ""), source);
    }
    // As CommonMark: the nearest opener wins, the outer run keeps a spare "*".
    assert.deepEqual(inline("**a *b**"), [
      text("*"),
      { type: "em", children: [text("a "), { type: "em", children: [text("b")] }] },
    ]);
  });

  test("code spans take any run length, strip one padding space and hold markup as text", () => {
    assert.deepEqual(inline("``a ` b`` ` <b>*x*</b> ` ```unclosed"), [
      { type: "code", text: "a ` b" },
      text(" "),
      { type: "code", text: "<b>*x*</b>" },
      text(" ```unclosed"),
    ]);
  });

  test("backslash escapes punctuation; other backslashes stay", () => {
    assert.deepEqual(inline("\\*not em\\* \\[x](y) a\\b \\`c`"), [text("*not em* [x](y) a\\b `c`")]);
  });

  test("links to http, https and mailto, with titles, escapes and balanced parentheses", () => {
    assert.deepEqual(inline('[a *b*](https://x.org/p_(q) "T") [m](mailto:me@x.org) [c](<https://x.org/a b>)'), [
      {
        type: "link",
        href: "https://x.org/p_(q)",
        title: "T",
        children: [text("a "), { type: "em", children: [text("b")] }],
      },
      text(" "),
      { type: "link", href: "mailto:me@x.org", title: "", children: [text("m")] },
      text(" [c](<https://x.org/a b>)"),
    ]);
  });

  test("autolinks: angle brackets and bare http(s) URLs without trailing punctuation", () => {
    const nodes = inline("see <https://a.org/x>, https://b.org/q?x=1. (https://c.org/w_(y)) www.d.org");
    assert.deepEqual(links(nodes), ["https://a.org/x", "https://b.org/q?x=1", "https://c.org/w_(y)"]);
    assert.equal(plain(nodes), "see https://a.org/x, https://b.org/q?x=1. (https://c.org/w_(y)) www.d.org");
    assert.deepEqual(links(inline("xhttps://glued.org")), [], "a URL must start a word");
    assert.deepEqual(links(inline("**https://in.bold/**")), ["https://in.bold/"]);
  });

  test("links do not nest; the outer brackets stay text", () => {
    const nodes = inline("[a [b](https://in.org) c](mailto:out@x.org)");
    assert.deepEqual(links(nodes), ["https://in.org/"]);
    assert.equal(plain(nodes), "[a b c](mailto:out@x.org)");
  });

  test("images, references and HTML stay text as written", () => {
    for (const source of ["<b>bold</b>", "&lt;tag&gt; &amp;", "[ref][1]", "[ref]", "<div onclick=x>", "<!-- c -->"]) {
      assert.deepEqual(inline(source), [text(source)], source);
    }
    const image = inline("![alt](https://x.org/i.png)");
    assert.equal(image[0].text, "!", "an image is never loaded: its link stays a link to it");
    assert.deepEqual(links(image), ["https://x.org/i.png"]);
  });

  test("wrappers nested past the cap are dropped but their text and markers are kept", () => {
    const levels = MAX_INLINE_DEPTH + 20;
    const source = `${"*a _b ".repeat(levels)}x${" b_ a*".repeat(levels)}`;
    const nodes = inline(source);
    assert.equal(depth(nodes), MAX_INLINE_DEPTH);
    const shown = plain(nodes);
    assert.equal(shown.replace(/[*_]/g, ""), source.replace(/[*_]/g, ""));
    assert.equal(shown.replace(/[^*_]/g, "").length, 2 * (2 * levels - MAX_INLINE_DEPTH));
  });
});

describe("hostile links", () => {
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

  test("a link to anything else stays text, exactly as written", () => {
    for (const target of hostile.filter((value) => !/[\s()\u0000]/.test(value))) {
      for (const source of [`[x](${target})`, `[x](<${target}>)`, `<${target}>`]) {
        const nodes = inline(source);
        assert.deepEqual(links(nodes), [], source);
        assert.equal(plain(nodes), source, source);
      }
    }
    const payload = "[link](javascript:alert(6))";
    assert.deepEqual(inline(payload), [text(payload)]);
  });
});

describe("linear work on hostile input", () => {
  // The parser counts its loop steps: work per input character must not grow
  // with the input (a quadratic rule would multiply it by four here).
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
    const source = "Some **bold**, `code`, [a link](https://example.org) and _em_.\n".repeat(16_000);
    const meter = { steps: 0 };
    const tree = parseMarkdown(source, { meter });
    assert.equal(tree.children.length, 1);
    assert.ok(meter.steps < source.length * 2, `${meter.steps} steps`);
  });
});
