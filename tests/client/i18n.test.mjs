import assert from "node:assert/strict";
import { readFile, readdir } from "node:fs/promises";
import { test } from "node:test";

import {
  LANG_KEY,
  Labels,
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
  assert.equal(zh("forkOf", { name: "abc" }), "派生自“abc”");
  assert.equal(zh("forkOf"), "派生自“{name}”");
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

test("Labels re-word their elements' text and attributes on every apply", () => {
  const labels = new Labels();
  const made = () => {
    const attributes = new Map();
    return { textContent: "", setAttribute: (name, value) => attributes.set(name, value), attributes };
  };
  const button = made();
  const field = made();
  let count = 1;
  labels.text(button, "unreadCount", () => ({ n: count }));
  labels.attr(field, "placeholder", "composerPlaceholder");
  labels.apply(translator("en"));
  assert.equal(button.textContent, "1 unread");
  assert.equal(field.attributes.get("placeholder"), "Message…");
  count = 3;
  labels.apply(translator("zh"));
  assert.equal(button.textContent, "3 条未读");
  assert.equal(field.attributes.get("placeholder"), "输入消息…");
});

test("every string key the client uses is defined", async () => {
  const folder = new URL("../../host/dsh/web/static/", import.meta.url);
  const used = new Set();
  for (const name of (await readdir(folder)).filter((file) => file.endsWith(".js"))) {
    const source = await readFile(new URL(name, folder), "utf8");
    for (const match of source.matchAll(/\bt\(\s*"([^"]+)"/g)) used.add(match[1]);
    for (const match of source.matchAll(/labels\.(?:text|attr)\(/g)) {
      // The key is the last string literal of the call.
      let depth = 0;
      let end = match.index + match[0].length;
      for (; end < source.length; end += 1) {
        if (source[end] === "(") depth += 1;
        else if (source[end] === ")") {
          if (depth === 0) break;
          depth -= 1;
        }
      }
      const literals = [...source.slice(match.index, end).matchAll(/"([\w.-]+)"/g)].map((m) => m[1]);
      used.add(literals.at(-1));
    }
  }
  for (const action of ["search", "new-session", "focus-composer", "send", "newline", "rename", "delete", "help", "escape"]) used.add(`shortcut.${action}`);
  const missing = [...used].filter((key) => !Object.hasOwn(STRINGS.en, key));
  assert.deepEqual(missing, []);
  assert.ok(used.size > 60, `${used.size} keys found`);
});
