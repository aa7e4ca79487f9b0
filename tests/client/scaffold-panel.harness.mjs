// The panel `dsh plugin new` writes, loaded the way the page loads a plugin's
// module (plugins.js with the real registry) and mounted in the real panel
// slot, on the fake DOM.
//
// Not a *.test.mjs: it needs a scaffolded plugin. tests/host/cli/test_scaffold.py
// writes one and runs `node --test` on this file with DSH_SCAFFOLD_PANEL (the
// generated panel.js) and DSH_SCAFFOLD_PLUGIN (the plugin's name) set.

import assert from "node:assert/strict";
import { test } from "node:test";
import { pathToFileURL } from "node:url";

import { PanelSlot } from "../../host/dsh/web/static/panels.js";
import { loadClientModules } from "../../host/dsh/web/static/plugins.js";
import { createRegistry } from "../../host/dsh/web/static/registry.js";
import { FakeDocument } from "./fake-dom.mjs";

const MODULE = process.env.DSH_SCAFFOLD_PANEL;
const PLUGIN = process.env.DSH_SCAFFOLD_PLUGIN;
if (!MODULE || !PLUGIN) {
  throw new Error("set DSH_SCAFFOLD_PANEL (a scaffolded panel.js) and DSH_SCAFFOLD_PLUGIN (its plugin's name)");
}
const TOKYO = { timeZone: "Asia/Tokyo", local: "2026-01-01T09:00:00+09:00" };

/** The registry after the page loaded the plugin's module as /api/client-modules lists it. */
async function loaded() {
  const registry = createRegistry();
  const modules = [{ plugin: PLUGIN, url: pathToFileURL(MODULE).href, eventTypes: [] }];
  const results = await loadClientModules({ modules, registry });
  return { registry, results };
}

/** The panel mounted for Session s1, and a way to give it props. */
async function mounted() {
  const { registry } = await loaded();
  const document = new FakeDocument();
  const errors = [];
  const slot = new PanelSlot({
    document,
    registry,
    host: { act: () => {}, resume: () => {} },
    onError: (err) => errors.push(err),
  });
  slot.open("s1");
  const show = (states, lang = "en") =>
    slot.update({ sessionId: "s1", live: true, states, lang, timeZone: "UTC", locale: "en", now: 1 });
  const panel = slot.element.querySelector(`[data-panel=${PLUGIN}]`);
  return { slot, panel, show, errors };
}

/** Every node below `node`, depth first. */
function descendants(node) {
  return node.childNodes.flatMap((child) => [child, ...descendants(child)]);
}

test("the page loads the module and its register(registry) adds one panel, owned by the plugin", async () => {
  const { registry, results } = await loaded();

  assert.deepEqual(results, [{ plugin: PLUGIN, ok: true }]);
  assert.deepEqual(
    registry.panels().map(({ id, owner, order }) => ({ id, owner, order })),
    [{ id: PLUGIN, owner: PLUGIN, order: 50 }],
  );
  assert.deepEqual(registry.types(), [], "a panel only: no event renderer");
});

test("the panel shows the tool's last answer, in the reader's language, and says when there is none", async () => {
  const { slot, panel, show, errors } = await mounted();
  const answer = panel.querySelector("[data-role=last-answer]");

  show({});
  assert.equal(slot.element.hasAttribute("hidden"), false, "visible before the first answer");
  assert.equal(panel.textContent, "Time No answer yet: ask what time it is.");

  show({ [PLUGIN]: { lastAnswer: TOKYO }, "another-plugin": { lastAnswer: "not ours" } });
  assert.equal(answer.textContent, "2026-01-01T09:00:00+09:00 (Asia/Tokyo)");
  assert.equal(answer.getAttribute("dir"), "auto");

  show({ [PLUGIN]: { lastAnswer: TOKYO } }, "zh");
  assert.equal(panel.textContent, "时间 2026-01-01T09:00:00+09:00 (Asia/Tokyo)");
  show({}, "zh");
  assert.equal(answer.textContent, "还没有回答：问一下现在几点。");
  assert.deepEqual(errors, []);
});

test("markup in the state is shown as text: the panel is built of text nodes only", async () => {
  const { panel, show, errors } = await mounted();
  const markup = '<img src=x onerror="alert(1)">';

  show({ [PLUGIN]: { lastAnswer: { timeZone: markup, local: "<b>9</b>" } } });

  assert.equal(panel.querySelector("[data-role=last-answer]").textContent, `<b>9</b> (${markup})`);
  const nodes = descendants(panel);
  assert.deepEqual(
    nodes.filter((node) => node.nodeType === 1).map((node) => node.localName),
    ["div", "strong", "span"],
    "no element came from the state",
  );
  for (const node of nodes) {
    assert.ok(node.nodeType === 3 || node.childNodes.length > 0, `${node.localName} holds text nodes`);
  }
  assert.deepEqual(errors, []);
});
