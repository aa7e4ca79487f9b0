import assert from "node:assert/strict";
import { test } from "node:test";

import { ApiError } from "../../host/dsh/web/static/api.js";
import { DEGRADED, POLL_MS, watchStorage } from "../../host/dsh/web/static/storage-status.js";
import { FakeDocument } from "./fake-dom.mjs";
import { FakeTimers, tick } from "./fake-server.mjs";

function setup(answers, lang = "en") {
  const document = new FakeDocument();
  const parent = document.createElement("div");
  const timers = new FakeTimers();
  const asked = [];
  const health = async () => {
    asked.push(answers.length);
    const answer = answers.shift();
    if (answer instanceof Error) throw answer;
    return answer;
  };
  let current = lang;
  const watch = watchStorage({ document, parent, health, lang: () => current, timers });
  return { watch, parent, timers, asked, setLang: (value) => (current = value) };
}

const degraded = (message) => new ApiError(503, DEGRADED, message);

test("a degraded store shows the host's words until storage keeps up again", async () => {
  const { watch, parent, timers } = setup([degraded("1 session has 3 events not yet stored"), { ok: true }]);
  await tick();
  const node = parent.querySelector("[data-role=storage-status]");
  assert.equal(node, watch.node);
  assert.equal(node.hasAttribute("hidden"), false);
  assert.equal(node.textContent, "Not saved yet: 1 session has 3 events not yet stored");
  assert.deepEqual(timers.delays, [POLL_MS]);

  timers.fireAll();
  await tick();
  assert.equal(node.hasAttribute("hidden"), true);
  assert.equal(node.textContent, "");
});

test("the prefix follows the reader's language", async () => {
  const { watch, setLang } = setup([degraded("2 sessions"), degraded("2 sessions")], "zh");
  await tick();
  assert.equal(watch.node.textContent, "尚未保存： 2 sessions");
  setLang("en");
  await watch.check();
  assert.equal(watch.node.textContent, "Not saved yet: 2 sessions");
});

test("other failures leave the banner as it is and polling goes on", async () => {
  const { watch, timers, asked } = setup([
    new ApiError(0, "network", "offline"),
    degraded("1 session"),
    new ApiError(401, "unauthorized", "no"),
  ]);
  await tick();
  assert.equal(watch.node.hasAttribute("hidden"), true);
  timers.fireAll();
  await tick();
  assert.equal(watch.node.hasAttribute("hidden"), false);
  timers.fireAll();
  await tick();
  assert.equal(watch.node.hasAttribute("hidden"), false);
  assert.equal(asked.length, 3);
});

test("stop ends polling and a late answer changes nothing", async () => {
  let release;
  const document = new FakeDocument();
  const parent = document.createElement("div");
  const timers = new FakeTimers();
  const health = () =>
    new Promise((_, reject) => {
      release = () => reject(degraded("late"));
    });
  const watch = watchStorage({ document, parent, health, timers });
  watch.stop();
  release();
  await tick();
  assert.equal(watch.node.hasAttribute("hidden"), true);
  assert.equal(timers.pending.size, 0);
});

test("under node a poll is unref'd so it never keeps the process alive", async () => {
  const document = new FakeDocument();
  const parent = document.createElement("div");
  const unrefs = [];
  const timers = {
    setTimeout: () => ({ unref: () => unrefs.push(true) }),
    clearTimeout: () => {},
  };
  const watch = watchStorage({ document, parent, health: async () => ({ ok: true }), timers });
  await tick();
  assert.deepEqual(unrefs, [true]);
  watch.stop();
});
