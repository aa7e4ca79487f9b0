import assert from "node:assert/strict";
import { test } from "node:test";

import { createRegistry } from "../../host/dsh/web/static/registry.js";
import { COLD_LOOKUPS, ColdStates, sessionStatuses } from "../../host/dsh/web/static/statuses.js";

test("a Session's statuses come from its state, else its list summary, in registration order", () => {
  const registry = createRegistry();
  registry.registerStatus("a", (value, ctx) => ({ text: `${ctx.kind}:${value.n}:${ctx.live}:${ctx.lang}`, tone: "waiting" }));
  registry.registerStatus("b", (value) => (value.n > 1 ? { text: `b${value.n}` } : null));
  registry.registerStatus("c", () => {
    throw new Error("broken describer");
  });
  registry.registerStatus("d", () => ({ text: "" }));
  const errors = [];
  const statuses = sessionStatuses(registry, {
    stateOf: (plugin) => (plugin === "a" ? { n: 1 } : undefined),
    summary: { plugins: { a: { n: 9 }, b: { n: 2 }, c: {}, d: {} } },
    live: false,
    lang: "zh",
    now: 5,
    onError: (err) => errors.push(err.message),
  });
  assert.deepEqual(statuses, [
    { plugin: "a", text: "state:1:false:zh", tone: "waiting" },
    { plugin: "b", text: "b2", tone: "info" },
  ]);
  assert.deepEqual(errors, ["broken describer"]);
  assert.deepEqual(sessionStatuses(registry, { summary: null, live: true }), [], "nothing known: nothing said");
  assert.deepEqual(sessionStatuses(null, {}), []);
});

test("cold Sessions' states are asked one at a time, once per length, for the first few only", async () => {
  const asked = [];
  const gates = [];
  const api = {
    getSession: (id) => {
      asked.push(id);
      return new Promise((resolve, reject) => gates.push({ id, resolve, reject }));
    },
  };
  let changes = 0;
  let wanted = false;
  const cold = new ColdStates({ api, wanted: () => wanted, onChange: () => (changes += 1) });
  const sessions = [
    { id: "live", live: true, length: 1 },
    { id: "summarised", live: false, length: 1, plugins: { p: { n: 1 } } },
    ...Array.from({ length: COLD_LOOKUPS + 3 }, (_, index) => ({ id: `c${index}`, live: false, length: index })),
  ];
  cold.want(sessions);
  assert.deepEqual(asked, [], "no plugin has a status: nothing is asked");
  wanted = true;
  cold.want(sessions);
  cold.want(sessions);
  assert.deepEqual(asked, ["c0"], "one at a time");
  gates.shift().resolve({ live: false, length: 0, plugins: { p: { n: 2 } } });
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(cold.states("c0", 0), { p: { n: 2 } });
  assert.equal(cold.states("c0", 1), undefined, "a longer log is another state");
  assert.equal(changes, 1);
  gates.shift().reject(new Error("gone"));
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(cold.states("c1", 1), {}, "a failure is remembered as nothing to say");
  while (gates.length > 0) {
    gates.shift().resolve({ plugins: null });
    await new Promise((resolve) => setImmediate(resolve));
  }
  assert.equal(asked.length, COLD_LOOKUPS, "each asked once, the one in flight included");
  assert.equal(new Set(asked).size, COLD_LOOKUPS);
  assert.ok(!asked.includes("live") && !asked.includes("summarised"));
  cold.want(sessions);
  assert.equal(asked.length, COLD_LOOKUPS, "all known: nothing more asked");
  new ColdStates({ api: null, wanted: () => true, onChange() {} }).want(sessions);
});
