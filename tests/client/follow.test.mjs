import assert from "node:assert/strict";
import { test } from "node:test";

import { STICKY_BOTTOM, createFollower } from "../../host/dsh/web/static/follow.js";
import { Labels, translator } from "../../host/dsh/web/static/i18n.js";
import { FakeDocument } from "./fake-dom.mjs";

function setup() {
  const document = new FakeDocument();
  const scroller = document.createElement("div");
  let height = 1000;
  Object.defineProperty(scroller, "scrollHeight", { get: () => height });
  scroller.clientHeight = 400;
  scroller.scrollTop = 600;
  const labels = new Labels();
  const follower = createFollower({ document, labels, scroller });
  labels.apply(translator("en"));
  return { scroller, follower, grow: (by) => (height += by), height: () => height };
}

test("at the bottom, new content is followed", () => {
  const { scroller, follower, grow } = setup();
  const before = follower.measure();
  assert.equal(before.atBottom, true);
  grow(200);
  follower.restore(before, { grew: true });
  assert.equal(scroller.scrollTop, 1200);
  assert.equal(follower.pillShown, false);
});

test("scrolled up, the place is kept and the pill says something arrived below", () => {
  const { scroller, follower, grow } = setup();
  scroller.scrollTop = 600 - STICKY_BOTTOM - 1;
  const before = follower.measure();
  assert.equal(before.atBottom, false);
  grow(200);
  follower.restore(before, { grew: false });
  assert.equal(follower.pillShown, false, "no pill for content that is not a new event");
  follower.restore(before, { grew: true });
  assert.equal(scroller.scrollTop, 519);
  assert.equal(follower.pillShown, true);
  assert.equal(follower.pill.textContent, "New messages ↓");
  scroller.dispatchEvent({ type: "scroll" });
  assert.equal(follower.pillShown, true, "still scrolled up");
  follower.pill.click();
  assert.equal(scroller.scrollTop, 1200);
  assert.equal(follower.pillShown, false);
});

test("older events above keep the reader's place; the reader's own send and a new Session go down", () => {
  const { scroller, follower, grow } = setup();
  scroller.scrollTop = 100;
  let before = follower.measure();
  grow(300);
  follower.restore(before, { prepended: true });
  assert.equal(scroller.scrollTop, 400);
  follower.stick();
  before = follower.measure();
  follower.restore(before, { prepended: true });
  assert.equal(scroller.scrollTop, 1300, "stick wins, once");
  scroller.scrollTop = 0;
  follower.restore(follower.measure(), { grew: true });
  assert.equal(scroller.scrollTop, 0);
  assert.equal(follower.pillShown, true);
  follower.reset();
  assert.equal(follower.pillShown, false);
  follower.restore(follower.measure(), {});
  assert.equal(scroller.scrollTop, 1300);
});

test("without layout (no numbers to measure) nothing moves", () => {
  const document = new FakeDocument();
  const scroller = document.createElement("div");
  const follower = createFollower({ document, labels: new Labels(), scroller });
  const before = follower.measure();
  assert.equal(before.atBottom, true);
  follower.restore(before, { grew: true });
  assert.equal(scroller.scrollTop, undefined);
});
