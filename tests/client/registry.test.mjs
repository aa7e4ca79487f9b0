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

test("panels are registered once each, stamped with their plugin, and listed by order then id", () => {
  const registry = createRegistry();
  const plugin = registry.forPlugin("client-ui-schedule");
  const mount = () => ({ element: null, update() {} });
  plugin.registerPanel("reminders", { mount, order: 10 });
  registry.registerPanel("notes", { mount });
  registry.registerPanel("alpha", { mount });
  assert.deepEqual(registry.panels().map((panel) => [panel.id, panel.owner, panel.order]), [
    ["alpha", "host", 0],
    ["notes", "host", 0],
    ["reminders", "client-ui-schedule", 10],
  ]);
  assert.equal(registry.panels()[2].mount, mount);
  assert.throws(() => registry.registerPanel("reminders", { mount }), /host: panel reminders is already registered by client-ui-schedule/);
  assert.throws(() => plugin.registerPanel("bad id!", { mount }), /^TypeError: client-ui-schedule: registry.registerPanel expects a panel id/);
  assert.throws(() => plugin.registerPanel("x", {}), /^TypeError: client-ui-schedule: panel x must be an object with mount\(host\)/);
  assert.throws(() => plugin.registerPanel("x", null), TypeError);
});

test("alerts and statuses are registered once per event type or plugin, with clear errors", () => {
  const registry = createRegistry();
  const plugin = registry.forPlugin("client-ui-schedule");
  const describe = () => null;
  plugin.registerAlert("schedule/change", describe);
  assert.equal(registry.alertFor("schedule/change"), describe);
  assert.equal(registry.alertFor("other/type"), undefined);
  assert.throws(() => registry.registerAlert("schedule/change", describe), /the alert of schedule\/change is already registered by client-ui-schedule/);
  assert.throws(() => plugin.registerAlert("nope", describe), /^TypeError: client-ui-schedule: registry.registerAlert expects an event type/);
  assert.throws(() => plugin.registerAlert("a/b", "no"), /the alert for a\/b must be a function/);

  plugin.registerStatus("tool-schedule", describe);
  assert.deepEqual(registry.statuses().map((status) => [status.plugin, status.owner]), [["tool-schedule", "client-ui-schedule"]]);
  assert.throws(() => registry.registerStatus("tool-schedule", describe), /the status of tool-schedule is already registered/);
  assert.throws(() => plugin.registerStatus("", describe), /registry.registerStatus expects a plugin name/);
  assert.throws(() => plugin.registerStatus("p", 1), /the status for p must be a function/);
});

test("a tool's error words are registered once per tool, stamped with their plugin", () => {
  const registry = createRegistry();
  const plugin = registry.forPlugin("client-ui-schedule");
  const describe = () => "The reminder could not be set";
  plugin.registerToolError("schedule_create", describe);
  assert.equal(registry.toolErrorFor("schedule_create"), describe);
  assert.equal(registry.toolErrorFor("other_tool"), undefined);
  assert.throws(() => registry.registerToolError("schedule_create", describe), /the error words of schedule_create is already registered by client-ui-schedule/);
  assert.throws(() => plugin.registerToolError("bad name!", describe), /^TypeError: client-ui-schedule: registry.registerToolError expects a tool name/);
  assert.throws(() => plugin.registerToolError("t", "no"), /the error words for t must be a function/);
});
