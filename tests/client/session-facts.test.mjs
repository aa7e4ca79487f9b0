import assert from "node:assert/strict";
import { test } from "node:test";

import { SessionFacts } from "../../host/dsh/web/static/session-facts.js";

test("frames and details change the facts; only changes count", () => {
  const facts = new SessionFacts();
  assert.equal(facts.live, null);
  assert.equal(facts.signal({ kind: "live", live: "yes" }), false, "not a boolean: ignored");
  assert.equal(facts.signal({ kind: "state", plugin: "", state: {} }), false);
  assert.equal(facts.signal({ kind: "other" }), false);
  assert.equal(facts.signal({ kind: "state", plugin: "p", state: { n: 1 } }), true);
  assert.equal(facts.signal({ kind: "state", plugin: "p", state: { n: 1 } }), false, "the same state again");
  assert.equal(facts.signal({ kind: "state", plugin: "q", state: null }), false, "removing what is not there");
  const changes = facts.changes;
  assert.equal(facts.detail(null, facts.version()), false);
  assert.equal(facts.detail({ live: true, plugins: [] }, facts.version()), true, "plugins that are not an object are left alone");
  assert.deepEqual(facts.states(), { p: { n: 1 } });
  assert.ok(facts.changes > changes);
  assert.equal(new SessionFacts({ live: "maybe" }).live, null);
});

test("a cold Session whose log grows is live again", () => {
  const facts = new SessionFacts({ live: false });
  assert.equal(facts.grew(10), false, "the tail it went cold at");
  assert.equal(facts.grew(8), false, "a shorter window (another lifecycle) lowers it");
  assert.equal(facts.grew(9), true, "an append: only a live Session appends");
  assert.equal(facts.live, true);
  assert.equal(facts.grew(20), false, "live: nothing to learn");
  assert.equal(facts.resumed(), false);
  facts.signal({ kind: "live", live: false });
  assert.equal(facts.grew(20), false);
  assert.equal(facts.resumed(), true);
});
