import assert from "node:assert/strict";
import { test } from "node:test";

import { parseToken } from "../../host/dsh/web/static/token-prompt.js";

test("a pasted address gives its token; a bare token is taken; anything else is refused", () => {
  assert.equal(parseToken("http://127.0.0.1:8765/?token=abc-DEF_123"), "abc-DEF_123");
  assert.equal(parseToken("  http://[::1]:8765/?x=1&token=a%2Bb  "), "a+b");
  assert.equal(parseToken("/?token=rel"), "rel");
  assert.equal(parseToken("kF3_x-9"), "kF3_x-9");
  assert.equal(parseToken(""), null);
  assert.equal(parseToken(null), null);
  assert.equal(parseToken("http://127.0.0.1:8765/"), null, "an address without a token");
  assert.equal(parseToken("http://127.0.0.1:8765/?token=has space"), null);
  assert.equal(parseToken("two words"), null);
  assert.equal(parseToken("http://[bad/?token=x"), null);
});
