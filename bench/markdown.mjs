// The client's markdown renderer, timed in node against the tests' fake DOM
// (no layout, no browser): what parsing and building the DOM of an answer
// costs, measured, never asserted.
//
//   node bench/markdown.mjs [STATIC_DIR]
//
// STATIC_DIR (default: this checkout's client) lets the same inputs time an
// older client, e.g. one extracted with `git archive`. Figures: the median
// render of a long answer (about 17 kB: headings, lists, a 40-row table,
// code, links, 72 formulas), once with formulas never seen before and once
// rendered again (as at each delta while it streams), and for the
// hostile inputs of tests/client/markdown.test.mjs the time ratio of 2n to n
// characters (≈ 2 when linear, ≈ 4 when quadratic).

import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";

import { FakeDocument } from "../tests/client/fake-dom.mjs";

const staticDir = process.argv[2] ?? new URL("../host/dsh/web/static/", import.meta.url).pathname;
const { renderMarkdown } = await import(pathToFileURL(`${staticDir.replace(/\/$/, "")}/markdown-dom.js`).href);

/** A long answer; `salt` makes its formulas new (nothing remembered from an earlier render). */
function longAnswer(salt = 0) {
  const parts = [];
  for (let section = 1; section <= 24; section += 1) {
    parts.push(`## Step ${section}: what to do\n`);
    parts.push(
      `This step has **bold words**, *emphasis*, \`inline code\`, a [link](https://example.org/${section}) ` +
        `and the energy $E = mc^${salt}$ with \\(a_${section} + b^2\\). It costs $5 and $10 in prose.\n`,
    );
    parts.push("- first point with _detail_\n- second point\n  1. nested one\n  2. nested two\n- third point\n");
    parts.push(`$$\n\\sum_{i=1}^{n} i^${section} = \\frac{n(n+1)}{${salt}}\n$$\n`);
    parts.push("```python\n" + `def step_${section}(x):\n    return [i * x for i in range(10)]\n`.repeat(4) + "```\n");
    parts.push("> A quoted remark that spans\n> two lines.\n");
  }
  parts.push("| name | value | note |\n|:-----|------:|:----:|\n");
  for (let row = 0; row < 40; row += 1) parts.push(`| item ${row} | ${row * 3} | **ok** |\n`);
  return parts.join("\n");
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function time(source, rounds) {
  const samples = [];
  for (let i = 0; i < rounds; i += 1) {
    const start = performance.now();
    renderMarkdown(new FakeDocument(), source);
    samples.push(performance.now() - start);
  }
  return median(samples);
}

const answer = longAnswer();
time(answer, 10);
const cold = [];
for (let round = 1; round <= 15; round += 1) {
  const fresh = longAnswer(round);
  const start = performance.now();
  renderMarkdown(new FakeDocument(), fresh);
  cold.push(performance.now() - start);
}
console.log(`long answer: ${answer.length} chars`);
console.log(`  first render (new formulas): median ${median(cold).toFixed(2)} ms`);
console.log(`  render again (as while streaming): median ${time(answer, 40).toFixed(2)} ms`);
const prose = answer.replace(/\$\$\n[^$]*\$\$\n/g, "").replace(/\$E = [^$]*\$ with \\\([^)]*\)/g, "");
time(prose, 10);
console.log(`the same without its formulas: ${prose.length} chars, median render ${time(prose, 40).toFixed(2)} ms`);

const hostile = {
  "unclosed emphasis": (n) => "*a ".repeat(n),
  "open brackets then links": (n) => `${"[".repeat(n)}${"[a](https://x.org) ".repeat(n)}`,
  "unfinished link targets": (n) => "[](".repeat(n),
  "backtick runs": (n) => Array.from({ length: n }, (_, i) => `x${"`".repeat(1 + (i % 50))}`).join(""),
  "nested quotes": (n) => `${"> ".repeat(n)}x`,
  "dollar openers": (n) => "$a ".repeat(n),
  "inline math openers": (n) => "\\(a $$b \\[c ".repeat(n),
  "many formulas": (n) => "$x^2$ and \\(y_1\\) ".repeat(n),
};
for (const [name, make] of Object.entries(hostile)) {
  const [small, large] = [4000, 8000].map((n) => {
    time(make(n), 2);
    return time(make(n), 5);
  });
  console.log(`${name}: n ${small.toFixed(1)} ms, 2n ${large.toFixed(1)} ms, ratio ${(large / small).toFixed(2)}`);
}
