import assert from "node:assert/strict";
import { test } from "node:test";

import { jsonEqual, prettyJson } from "../../host/dsh/web/static/json.js";

test("jsonEqual is structural and ignores key order", () => {
  assert.ok(jsonEqual({ a: [1, { b: 2 }], c: null }, { c: null, a: [1, { b: 2 }] }));
  assert.ok(jsonEqual("x", "x"));
  assert.ok(!jsonEqual({ a: 1 }, { a: 1, b: undefined }));
  assert.ok(!jsonEqual([1, 2], [1, 2, 3]));
  assert.ok(!jsonEqual([1, 2], [1, 3]));
  assert.ok(!jsonEqual([1], { 0: 1 }));
  assert.ok(!jsonEqual(null, {}));
  assert.ok(!jsonEqual({ a: 1 }, { b: 1 }));
  assert.ok(!jsonEqual({ a: { b: 1 } }, { a: { b: 2 } }));
  assert.ok(!jsonEqual(1, "1"));
});

test("prettyJson indents, and never throws", () => {
  assert.equal(prettyJson({ a: [1] }), '{\n  "a": [\n    1\n  ]\n}');
  assert.equal(prettyJson(undefined), "undefined");
  const cycle = {};
  cycle.self = cycle;
  assert.equal(prettyJson(cycle), "[unserializable value]");
  assert.equal(prettyJson(10n), "[unserializable value]");
});
