import assert from "node:assert/strict";
import { test } from "node:test";

import { loadClientModules } from "../../host/dsh/web/static/plugins.js";
import { createRegistry } from "../../host/dsh/web/static/registry.js";

test("each listed module is imported and its register(registry) called", async () => {
  const registry = createRegistry();
  const imported = [];
  const modules = {
    "/plugins/ui/a.js": { register: (r) => r.register("a/x", () => null) },
    "/plugins/ui/b.js": {},
    "/plugins/ui/c.js": {
      register: () => {
        throw new Error("c is broken");
      },
    },
    "/plugins/ui/e.js": { register: (r) => r.register("a/x", () => null) },
  };
  const results = await loadClientModules({
    modules: [
      { plugin: "a", url: "/plugins/ui/a.js", eventTypes: ["a/x"] },
      { plugin: "b", url: "/plugins/ui/b.js", eventTypes: [] },
      { plugin: "c", url: "/plugins/ui/c.js", eventTypes: [] },
      { plugin: "d", url: "/plugins/ui/missing.js", eventTypes: [] },
      { plugin: "e", url: "/plugins/ui/e.js", eventTypes: ["a/x"] },
    ],
    registry,
    importModule: async (url) => {
      imported.push(url);
      if (!(url in modules)) throw new Error(`404 ${url}`);
      return modules[url];
    },
  });
  assert.equal(imported.length, 5);
  assert.deepEqual(results.map((r) => [r.plugin, r.ok]), [
    ["a", true],
    ["b", false],
    ["c", false],
    ["d", false],
    ["e", false],
  ]);
  assert.match(results[1].error.message, /b: module has no register/);
  assert.match(results[2].error.message, /c is broken/);
  assert.match(results[3].error.message, /404/);
  assert.match(results[4].error.message, /^e: a\/x already has a renderer from a/);
  assert.equal(registry.ownerOf("a/x"), "a");
});

test("the schedule plugin's real module registers and renders through the registry", async () => {
  const url = new URL(
    "../../plugins/client-ui-schedule/src/dsh_client_ui_schedule/static/schedule-reminder.js",
    import.meta.url,
  );
  const registry = createRegistry({ lang: () => "zh" });
  const [result] = await loadClientModules({
    modules: [{ plugin: "client-ui-schedule", url: url.href, eventTypes: ["schedule/change"] }],
    registry,
  });
  assert.equal(result.ok, true, String(result.error));
  assert.equal(registry.ownerOf("schedule/change"), "client-ui-schedule");
});
