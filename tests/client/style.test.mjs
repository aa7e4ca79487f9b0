// What the stylesheet promises the page's layout (a fake DOM lays nothing
// out): the person's own message menu opens beside their bubble, list titles
// take two lines, and on a phone the reminders panel leaves the transcript —
// and its day dividers — the room.

import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { test } from "node:test";

const css = await readFile(new URL("../../host/dsh/web/static/style.css", import.meta.url), "utf8");

/** The declarations of every rule whose selector list includes `selector` (outside and inside @media). */
function declarations(selector, source = css) {
  const found = [];
  for (const match of source.matchAll(/([^{}]+)\{([^{}]*)\}/g)) {
    const selectors = match[1].split(",").map((item) => item.replace(/\/\*[\s\S]*?\*\//g, "").trim());
    if (selectors.includes(selector)) found.push(match[2]);
  }
  return found.join("\n");
}

function media(query) {
  const start = css.indexOf(`@media ${query} {`);
  assert.notEqual(start, -1, `no @media ${query}`);
  let depth = 0;
  for (let at = css.indexOf("{", start); at < css.length; at += 1) {
    if (css[at] === "{") depth += 1;
    else if (css[at] === "}" && --depth === 0) return css.slice(css.indexOf("{", start) + 1, at);
  }
  throw new Error("unbalanced");
}

test("the person's own message menu opens beside their bubble (on the right), not at the far left", () => {
  assert.match(declarations(".message-menu"), /right:\s*4px/);
  assert.doesNotMatch(declarations(".node-user .message-menu"), /left:/);
  assert.match(declarations(".node-user"), /align-items:\s*flex-end/, "the bubble is on the right");
});

test("list titles take two lines, clamped, instead of one cut line", () => {
  const title = declarations(".session-title");
  assert.match(title, /-webkit-line-clamp:\s*2/);
  assert.doesNotMatch(title, /white-space:\s*nowrap/);
  assert.match(declarations(".unread[hidden]"), /display:\s*none/, "a 0 count takes no room");
});

test("on a phone the panels take at most a slice of the screen, and a folded panel is one line", () => {
  const phone = media("(max-width: 600px)");
  const height = /max-height:\s*(\d+)vh/.exec(declarations(".panels", phone));
  assert.ok(height !== null && Number(height[1]) <= 30, "room for the transcript and its day dividers");
  assert.match(declarations('.panel[data-open="false"] .panel-badge', phone), /display:\s*none/);
});
