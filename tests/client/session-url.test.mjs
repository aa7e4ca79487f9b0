// Tests for host/dsh/web/static/session-url.js: `#/s/<id>` and `?session=<id>`.
// Run with `node --test tests/client/`.

import assert from "node:assert/strict";
import { test } from "node:test";

import { sessionFromHash, takeSessionFromUrl } from "../../host/dsh/web/static/session-url.js";

function at(href) {
  const url = new URL(href);
  const replaced = [];
  const location = { href: url.href, hash: url.hash };
  const history = { state: { keep: 1 }, replaceState: (state, _title, next) => replaced.push([state, next]) };
  return { location, history, replaced };
}

test("the hash names a Session", () => {
  assert.equal(sessionFromHash("#/s/abc"), "abc");
  assert.equal(sessionFromHash("#/s/a%20b"), "a b");
  assert.equal(sessionFromHash("#/s/%E0%A4%A"), null);
  assert.equal(sessionFromHash("#/other"), null);
  assert.equal(sessionFromHash(""), null);
});

test("?session=<id> opens that Session once and leaves the address", () => {
  const page = at("http://127.0.0.1:8765/?session=s-1&x=2");
  assert.equal(takeSessionFromUrl(page), "s-1");
  assert.deepEqual(page.replaced, [[{ keep: 1 }, "/?x=2"]]);
  const only = at("http://127.0.0.1:8765/?session=s%201");
  assert.equal(takeSessionFromUrl(only), "s 1");
  assert.deepEqual(only.replaced, [[{ keep: 1 }, "/"]]);
});

test("the hash wins over the query; an empty query names nothing; no query changes nothing", () => {
  const both = at("http://127.0.0.1:8765/?session=q#/s/h");
  assert.equal(takeSessionFromUrl(both), "h");
  assert.deepEqual(both.replaced, [[{ keep: 1 }, "/#/s/h"]]);
  const empty = at("http://127.0.0.1:8765/?session=");
  assert.equal(takeSessionFromUrl(empty), null);
  const plain = at("http://127.0.0.1:8765/#/s/h");
  assert.equal(takeSessionFromUrl(plain), "h");
  assert.deepEqual(plain.replaced, []);
});
