import assert from "node:assert/strict";
import { test } from "node:test";

import { TOKEN_KEY, takeToken } from "../../host/dsh/web/static/token.js";

function environment(href, stored = {}) {
  const data = new Map(Object.entries(stored));
  const replaced = [];
  return {
    data,
    replaced,
    location: { href },
    history: { state: { keep: 1 }, replaceState: (state, title, url) => replaced.push({ state, url }) },
    storage: { getItem: (key) => data.get(key) ?? null, setItem: (key, value) => data.set(key, value) },
  };
}

test("the token is taken from the URL, stored, and removed from the address bar", () => {
  const env = environment("http://127.0.0.1:8765/?token=XYZ&x=1#/s/abc");
  assert.equal(takeToken(env), "XYZ");
  assert.equal(env.data.get(TOKEN_KEY), "XYZ");
  assert.deepEqual(env.replaced, [{ state: { keep: 1 }, url: "/?x=1#/s/abc" }]);
});

test("without ?token= the stored token is used; without either there is none", () => {
  const env = environment("http://127.0.0.1:8765/", { [TOKEN_KEY]: "OLD" });
  assert.equal(takeToken(env), "OLD");
  assert.deepEqual(env.replaced, []);
  assert.equal(takeToken(environment("http://127.0.0.1:8765/")), null);
  assert.equal(takeToken({ ...environment("http://h/"), storage: null }), null);
});

test("broken storage does not lose the token from the URL", () => {
  const env = environment("http://h/?token=T");
  env.storage = {
    setItem() {
      throw new Error("quota");
    },
    getItem() {
      throw new Error("denied");
    },
  };
  assert.equal(takeToken(env), "T");
  assert.equal(env.replaced[0].url, "/");
  assert.equal(takeToken({ ...env, location: { href: "http://h/" } }), null);
});

test("a token an older page kept per tab is moved to the store every tab shares", () => {
  const env = environment("http://127.0.0.1:8765/");
  const legacy = environment("http://127.0.0.1:8765/", { [TOKEN_KEY]: "PER-TAB" });
  assert.equal(takeToken({ ...env, legacy: legacy.storage }), "PER-TAB");
  assert.equal(env.data.get(TOKEN_KEY), "PER-TAB");
  // The shared store wins over an older per-tab one.
  env.data.set(TOKEN_KEY, "SHARED");
  assert.equal(takeToken({ ...env, legacy: legacy.storage }), "SHARED");
  assert.equal(takeToken({ ...environment("http://h/"), legacy: environment("http://h/").storage }), null);
});
