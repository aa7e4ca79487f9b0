import assert from "node:assert/strict";
import { test } from "node:test";

import { createRegistry } from "../../host/dsh/web/static/registry.js";

test("the registry checks its arguments and refuses a second renderer for a type", () => {
  const registry = createRegistry({ lang: () => "zh" });
  assert.equal(registry.lang(), "zh");
  assert.throws(() => registry.register("nope", () => null), TypeError);
  assert.throws(() => registry.register("a/b", "not a function"), TypeError);
  const plugin = registry.forPlugin("client-ui-schedule");
  assert.equal(plugin.lang(), "zh");
  plugin.register("schedule/change", () => null);
  assert.equal(registry.ownerOf("schedule/change"), "client-ui-schedule");
  assert.deepEqual(registry.types(), ["schedule/change"]);
  assert.throws(() => registry.register("schedule/change", () => null), /already has a renderer from client-ui-schedule/);
  assert.throws(() => registry.forPlugin("other").register("x", () => null), /^TypeError: other:/);
});

test("the registry's language follows its source at call time", () => {
  let lang = "en";
  const registry = createRegistry({ lang: () => lang });
  const facade = registry.forPlugin("p");
  lang = "zh";
  assert.equal(registry.lang(), "zh");
  assert.equal(facade.lang(), "zh");
  assert.equal(createRegistry().lang(), "en");
  assert.equal(registry.lookup("none/here"), undefined);
});
