import assert from "node:assert/strict";
import { test } from "node:test";

import { PanelSlot } from "../../host/dsh/web/static/panels.js";
import { createRegistry } from "../../host/dsh/web/static/registry.js";
import { FakeDocument } from "./fake-dom.mjs";

function setup(register, { storage = null } = {}) {
  const document = new FakeDocument();
  const registry = createRegistry();
  register(registry);
  const errors = [];
  const asked = [];
  const slot = new PanelSlot({
    document,
    registry,
    storage,
    host: { act: (...args) => asked.push(["act", ...args]), resume: (id) => asked.push(["resume", id]) },
    onError: (err) => errors.push(err.message),
  });
  return { document, slot, errors, asked };
}

function recorder(document, log, name, { hidden = false } = {}) {
  return {
    mount(host) {
      log.push([name, "mount", host]);
      const element = document.createElement("section");
      if (hidden) element.setAttribute("hidden", "");
      return { element, update: (props) => log.push([name, "update", props]), destroy: () => log.push([name, "destroy"]) };
    },
  };
}

test("panels are mounted per Session in order, given each change once, and destroyed with it", () => {
  const log = [];
  const document = new FakeDocument();
  const { slot, asked } = setup((registry) => {
    registry.registerPanel("b", recorder(document, log, "b"));
    registry.forPlugin("p").registerPanel("a", { ...recorder(document, log, "a"), order: -1 });
  });
  assert.equal(slot.element.getAttribute("data-role"), "panels");
  assert.ok(slot.element.hasAttribute("hidden"));
  assert.equal(slot.active, false);
  slot.open("s1");
  assert.equal(slot.sessionId, "s1");
  assert.equal(slot.active, true);
  assert.deepEqual(slot.element.children.map((el) => el.getAttribute("data-panel")), ["a", "b"]);
  assert.equal(slot.element.hasAttribute("hidden"), false);
  const host = log[0][2];
  host.act("tool-schedule", "delete", { id: "rem-1" });
  host.resume();
  assert.deepEqual(asked, [["act", "s1", "tool-schedule", "delete", { id: "rem-1" }], ["resume", "s1"]]);
  const props = { sessionId: "s1", live: true, states: {}, lang: "en", now: 1 };
  slot.update(props);
  slot.update({ ...props });
  slot.update({ ...props, sessionId: "other" });
  assert.equal(log.filter(([, what]) => what === "update").length, 2, "the same props twice: one update each; another Session's: none");
  slot.open("s2");
  assert.deepEqual(log.filter(([, what]) => what === "destroy").map(([name]) => name), ["a", "b"]);
  slot.clear();
  assert.equal(slot.sessionId, null);
  assert.equal(slot.element.children.length, 0);
  slot.update(props);
  assert.equal(log.filter(([, what]) => what === "update").length, 2, "no Session: nothing to update");
});

test("a panel that fails to mount, returns nothing usable, or throws in update costs only itself", () => {
  const log = [];
  const document = new FakeDocument();
  const { slot, errors } = setup((registry) => {
    registry.forPlugin("bad").registerPanel("throws", { mount: () => { throw new Error("mount failed"); } });
    registry.forPlugin("odd").registerPanel("shapeless", { mount: () => ({ element: "text", update() {} }) });
    registry.forPlugin("late").registerPanel("breaks", {
      mount: () => ({
        element: document.createElement("div"),
        update: () => { throw new Error("update failed"); },
        destroy: () => { throw new Error("destroy failed"); },
      }),
    });
    registry.registerPanel("good", recorder(document, log, "good", { hidden: true }));
  });
  slot.open("s");
  assert.deepEqual(errors, ["odd: panel shapeless mount() must return {element, update(props)}", "mount failed"], "in panel order");
  assert.deepEqual(slot.element.children.map((el) => el.getAttribute("data-panel")), ["breaks", "good"]);
  slot.update({ sessionId: "s", now: 1 });
  assert.deepEqual(errors.slice(2), ["update failed", "destroy failed"]);
  assert.deepEqual(slot.element.children.map((el) => el.getAttribute("data-panel")), ["good"]);
  assert.ok(slot.element.hasAttribute("hidden"), "only hidden panels left: the slot hides too");
});

test("each panel keeps small choices under its own keys", () => {
  const data = new Map();
  const storage = { getItem: (k) => data.get(k) ?? null, setItem: (k, v) => data.set(k, v), removeItem: (k) => data.delete(k) };
  const log = [];
  const document = new FakeDocument();
  const { slot } = setup((registry) => registry.registerPanel("notes", recorder(document, log, "notes")), { storage });
  slot.open("s");
  const keys = log[0][2].storage;
  assert.equal(keys.get("open"), null);
  keys.set("open", "closed");
  assert.deepEqual([...data], [["dsh.panel.notes.open", "closed"]]);
  assert.equal(keys.get("open"), "closed");
  keys.set("open", null);
  assert.equal(data.size, 0);
  const broken = new PanelSlot({
    document,
    registry: { panels: () => [{ id: "x", owner: "p", mount: recorder(document, log, "x").mount }] },
    storage: { getItem: () => { throw new Error("no"); }, setItem: () => { throw new Error("no"); } },
    host: {},
  });
  broken.open("s");
  const brokenKeys = log.at(-1)[2].storage;
  assert.equal(brokenKeys.get("open"), null);
  brokenKeys.set("open", "closed");
});

test("a panel registered after its Session was opened joins it in order, with the last props, once", () => {
  const log = [];
  const document = new FakeDocument();
  let registry = null;
  const { slot, errors } = setup((given) => {
    registry = given;
    given.registerPanel("b", recorder(document, log, "b"));
  });
  slot.adopt();
  assert.equal(slot.active, false, "no Session open: nothing is adopted");
  slot.open("s");
  const props = { sessionId: "s", now: 1 };
  slot.update(props);
  // A UI plugin's module arrives late: one panel before "b", one that fails.
  registry.forPlugin("late").registerPanel("a", { ...recorder(document, log, "a"), order: -1 });
  registry.forPlugin("broken").registerPanel("c", { mount: () => { throw new Error("mount failed"); } });
  slot.adopt();
  assert.deepEqual(slot.element.children.map((el) => el.getAttribute("data-panel")), ["a", "b"]);
  assert.deepEqual(log.filter(([name]) => name === "a").map(([, what, given]) => [what, what === "update" ? given : null]), [
    ["mount", null],
    ["update", props],
  ]);
  assert.equal(log.filter(([name, what]) => name === "b" && what === "mount").length, 1, "b kept, not mounted again");
  slot.adopt();
  assert.deepEqual(errors, ["mount failed"], "a failed panel is not tried again for this Session");
  assert.equal(log.filter(([, what]) => what === "mount").length, 2);
  slot.open("t");
  assert.deepEqual(errors, ["mount failed", "mount failed"], "a new Session tries every panel again");
  // Adopted before any props: mounted, and given props with the next update.
  registry.forPlugin("later").registerPanel("d", recorder(document, log, "d"));
  slot.adopt();
  assert.deepEqual(log.filter(([name]) => name === "d").map(([, what]) => what), ["mount"]);
});
