import assert from "node:assert/strict";
import { test } from "node:test";

import { PluginSurface, TICK_MS } from "../../host/dsh/web/static/plugin-surface.js";
import { createRegistry } from "../../host/dsh/web/static/registry.js";
import { FakeDocument } from "./fake-dom.mjs";
import { FakeTimers } from "./fake-server.mjs";

function surface({ registry = createRegistry(), api = null, current = null, now = () => 10_500 } = {}) {
  const told = [];
  const said = [];
  const errors = [];
  const moved = [];
  const timers = new FakeTimers();
  const made = new PluginSurface({
    document: new FakeDocument(),
    registry,
    api,
    now,
    timers,
    follower: { measure: () => ({ atBottom: false }), toBottom() {} },
    announcer: { announce: (line) => said.push(line) },
    attention: { deliver: (alert) => told.push(alert) },
    current: () => current,
    refreshSessions() {},
    onStatuses: (change) => moved.push(change ?? null),
    onError: (err) => errors.push(err.message),
  });
  return { made, told, said, errors, moved, timers };
}

test("alerts are read out (counting and notifying is the host-wide stream's); a describer that throws or says nothing costs only itself", () => {
  const registry = createRegistry();
  registry.registerAlert("a/ok", (view, ctx) => ({ title: `ok ${view.n} ${ctx.lang} ${ctx.timeZone}`, body: 7 }));
  registry.registerAlert("a/throws", () => {
    throw new Error("describer broke");
  });
  registry.registerAlert("a/none", () => null);
  const { made, told, said, errors } = surface({ registry });
  const node = (seq, eventType) => ({ seq, eventType, view: { n: seq } });
  made.tell([node(1, "a/ok"), node(2, "a/throws"), node(3, "a/none"), node(4, "a/unknown")], {
    lang: "en",
    time: { timeZone: "UTC", locale: "en-GB" },
  });
  assert.deepEqual(said, ["ok 1 en UTC"]);
  assert.deepEqual(told, [], "nothing is counted or notified from here: nothing is counted twice");
  assert.deepEqual(errors, ["describer broke"]);
});

test("the tick runs only when a plugin has a panel or a status, just after each second, until stopped", () => {
  const quiet = surface();
  quiet.made.start();
  assert.equal(quiet.timers.pending.size, 0, "nothing to keep current: no timer");
  const registry = createRegistry();
  registry.registerStatus("p", () => null);
  const { made, moved, timers } = surface({ registry });
  made.start();
  made.start();
  assert.equal(timers.pending.size, 1);
  assert.deepEqual(timers.delays, [TICK_MS - 500 + 5]);
  timers.fireAll();
  assert.deepEqual(moved, [{ tick: true }]);
  assert.equal(timers.pending.size, 1, "armed again");
  made.stop();
  assert.equal(timers.pending.size, 0);
});

test("without an API, actions refuse plainly; with one they go through and the facts are read again", async () => {
  const { made } = surface();
  await assert.rejects(made.act("s", "p", "x", {}), /no access token/);
  await assert.rejects(made.resume("s"), /no access token/);
  const calls = [];
  const current = { id: "s", facts: { resumed: () => true }, refreshDetail: async () => true };
  const api = { act: async (...args) => (calls.push(["act", ...args]), { done: 1 }), resume: async (id) => (calls.push(["resume", id]), {}) };
  const live = surface({ api, current });
  assert.deepEqual(await live.made.act("s", "p", "x", { id: 1 }), { done: 1 });
  await live.made.resume("s");
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(calls, [["act", "s", "p", "x", { id: 1 }], ["resume", "s"]]);
  assert.ok(live.moved.length >= 2, "the list and the header are redrawn");
  assert.equal(live.made.statusesChanged([{ id: "s" }], { lang: "en" }), true);
  assert.equal(live.made.statusesChanged([{ id: "s" }], { lang: "en" }), false);
});

test("the list's cold lookups skip the open Session: its facts say its statuses, and a delete must not race one", async () => {
  const registry = createRegistry();
  registry.registerStatus("p", () => null);
  const asked = [];
  const api = { getSession: async (id) => (asked.push(id), { id, length: 1, plugins: {} }) };
  const cold = [
    { id: "open", live: false, length: 1 },
    { id: "other", live: false, length: 1 },
  ];
  const opened = surface({ registry, api, current: { id: "open" } });
  opened.made.listed(cold);
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(asked, ["other"]);
  asked.length = 0;
  const closed = surface({ registry, api, current: null });
  closed.made.listed(cold);
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(asked, ["open", "other"], "nothing open: every cold Session is looked up");
});
