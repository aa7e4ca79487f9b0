import assert from "node:assert/strict";
import { test } from "node:test";

import { createAnnouncer } from "../../host/dsh/web/static/announcer.js";
import { FakeDocument } from "./fake-dom.mjs";

test("lines are added to a polite, visually hidden live region; only the last few are kept", () => {
  const announcer = createAnnouncer(new FakeDocument());
  assert.equal(announcer.element.getAttribute("aria-live"), "polite");
  assert.match(announcer.element.getAttribute("class"), /visually-hidden/);
  for (let i = 0; i < 8; i += 1) announcer.announce(`line ${i}`);
  announcer.announce("   ");
  assert.deepEqual(announcer.element.children.map((p) => p.textContent), ["line 3", "line 4", "line 5", "line 6", "line 7"]);
  announcer.announce("x".repeat(1000));
  assert.equal(announcer.element.children.at(-1).textContent.length, 301);
  announcer.clear();
  assert.equal(announcer.element.children.length, 0);
});
