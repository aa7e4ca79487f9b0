import assert from "node:assert/strict";
import { test } from "node:test";

import { THEME_KEY, createTheme } from "../../host/dsh/web/static/theme.js";
import { FakeDocument } from "./fake-dom.mjs";

function media(matches) {
  const listeners = new Set();
  return {
    query: null,
    matchMedia(query) {
      this.query = query;
      return {
        get matches() {
          return matches;
        },
        addEventListener: (type, fn) => listeners.add(fn),
        removeEventListener: (type, fn) => listeners.delete(fn),
      };
    },
    change(value) {
      matches = value;
      for (const fn of listeners) fn();
    },
    listeners,
  };
}

function storage(initial = {}) {
  const data = new Map(Object.entries(initial));
  return {
    data,
    getItem: (key) => data.get(key) ?? null,
    setItem: (key, value) => data.set(key, value),
    removeItem: (key) => data.delete(key),
  };
}

test("without a pick the page follows the system, and follows it when it changes", () => {
  const root = new FakeDocument().documentElement;
  const system = media(true);
  const seen = [];
  const theme = createTheme({ root, storage: storage(), matchMedia: (q) => system.matchMedia(q) });
  theme.subscribe((value) => seen.push(value));
  assert.equal(system.query, "(prefers-color-scheme: dark)");
  assert.equal(theme.effective(), "dark");
  assert.equal(theme.choice(), null);
  assert.equal(root.hasAttribute("data-theme"), false, "the CSS media query decides");
  system.change(false);
  assert.equal(theme.effective(), "light");
  assert.deepEqual(seen, ["light"]);
  theme.destroy();
  assert.equal(system.listeners.size, 0);
});

test("the toggle picks the other theme and keeps the pick; picking the system's theme follows the system again", () => {
  const root = new FakeDocument().documentElement;
  const store = storage();
  const system = media(false);
  const theme = createTheme({ root, storage: store, matchMedia: (q) => system.matchMedia(q) });
  assert.equal(theme.toggle(), "dark");
  assert.equal(root.getAttribute("data-theme"), "dark");
  assert.equal(store.data.get(THEME_KEY), "dark");
  const again = createTheme({ root: new FakeDocument().documentElement, storage: store, matchMedia: (q) => system.matchMedia(q) });
  assert.equal(again.effective(), "dark", "the pick survives a reload");
  assert.equal(theme.toggle(), "light");
  assert.equal(root.hasAttribute("data-theme"), false);
  assert.equal(store.data.has(THEME_KEY), false);
  // A pick against a dark system is kept as light.
  system.change(true);
  assert.equal(theme.toggle(), "light");
  assert.equal(root.getAttribute("data-theme"), "light");
  assert.equal(store.data.get(THEME_KEY), "light");
});

test("no matchMedia, no storage, or storage that throws: light, and the pick lasts for the page", () => {
  const root = new FakeDocument().documentElement;
  const broken = {
    getItem() {
      throw new Error("denied");
    },
    setItem() {
      throw new Error("denied");
    },
    removeItem() {
      throw new Error("denied");
    },
  };
  const theme = createTheme({ root, storage: broken });
  assert.equal(theme.effective(), "light");
  assert.equal(theme.toggle(), "dark");
  assert.equal(theme.toggle(), "light");
  assert.equal(createTheme({ root, storage: storage({ [THEME_KEY]: "sepia" }) }).choice(), null, "unknown values are ignored");
});
