import assert from "node:assert/strict";
import { test } from "node:test";

import {
  LANG_KEY,
  STRINGS,
  initialLang,
  normalizeLang,
  saveLang,
  translator,
} from "../../host/dsh/web/static/i18n.js";

function memoryStorage(initial = {}) {
  const data = new Map(Object.entries(initial));
  return {
    data,
    getItem: (key) => (data.has(key) ? data.get(key) : null),
    setItem: (key, value) => data.set(key, String(value)),
  };
}

test("both languages define exactly the same keys", () => {
  assert.deepEqual(Object.keys(STRINGS.zh).sort(), Object.keys(STRINGS.en).sort());
  for (const [key, text] of Object.entries(STRINGS.zh)) {
    const names = (value) => [...value.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
    assert.deepEqual(names(text), names(STRINGS.en[key]), `placeholders of ${key}`);
  }
});

test("the translator fills placeholders and falls back to English, then the key", () => {
  const zh = translator("zh-TW");
  assert.equal(zh("forkOf", { id: "abc" }), "派生自 abc");
  assert.equal(zh("forkOf"), "派生自 {id}");
  assert.equal(translator("fr")("send"), "Send");
  assert.equal(zh("no.such.key"), "no.such.key");
});

test("the choice is persisted, and the browser's preference is the default", () => {
  assert.equal(normalizeLang("ZH-hans"), "zh");
  assert.equal(normalizeLang(undefined), "en");
  const storage = memoryStorage();
  assert.equal(initialLang(storage, ["zh-CN", "en"]), "zh");
  assert.equal(initialLang(storage, ["de"]), "en");
  assert.equal(saveLang(storage, "zh"), "zh");
  assert.equal(storage.data.get(LANG_KEY), "zh");
  assert.equal(initialLang(storage, ["en"]), "zh");
  assert.equal(initialLang(memoryStorage({ [LANG_KEY]: "xx" }), "not a list"), "en");
});

test("disabled storage never breaks the language switch", () => {
  const broken = {
    getItem() {
      throw new Error("SecurityError");
    },
    setItem() {
      throw new Error("SecurityError");
    },
  };
  assert.equal(initialLang(broken, ["zh"]), "zh");
  assert.equal(saveLang(broken, "zh"), "zh");
  assert.equal(initialLang(null), "en");
});
