import assert from "node:assert/strict";
import { test } from "node:test";

import { ReadMarks } from "../../host/dsh/web/static/reading.js";

function marks(answer = (id, through) => ({ unread: 0, id, through })) {
  const asked = [];
  const errors = [];
  const reads = new ReadMarks({
    markRead: async (id, through) => {
      asked.push([id, through]);
      return answer(id, through);
    },
    onError: (err) => errors.push(err.message),
  });
  return { reads, asked, errors };
}

test("a mark is asked once; only a later seq is asked again; each Session on its own", async () => {
  const { reads, asked } = marks();
  assert.deepEqual(await reads.mark("s", 4), { unread: 0, id: "s", through: 4 });
  assert.equal(await reads.mark("s", 4), null);
  assert.equal(await reads.mark("s", 2), null, "marks only move forward");
  await reads.mark("s", 6);
  await reads.mark("t", 1);
  assert.deepEqual(asked, [["s", 4], ["s", 6], ["t", 1]]);
});

test("two looks at once send one request", async () => {
  const { reads, asked } = marks();
  await Promise.all([reads.mark("s", 3), reads.mark("s", 3)]);
  assert.deepEqual(asked, [["s", 3]]);
});

test("a failed mark is asked again at the next look; an unknown Session is not an error", async () => {
  let fail = true;
  const { reads, asked, errors } = marks(() => {
    if (fail) throw Object.assign(new Error("dsh web did not answer"), { status: 0 });
    return { unread: 0 };
  });
  assert.equal(await reads.mark("s", 3), null);
  fail = false;
  assert.deepEqual(await reads.mark("s", 3), { unread: 0 });
  assert.deepEqual(asked, [["s", 3], ["s", 3]]);
  assert.deepEqual(errors, ["dsh web did not answer"]);
  const gone = marks(() => {
    throw Object.assign(new Error("no session x"), { status: 404 });
  });
  assert.equal(await gone.reads.mark("x", 0), null);
  assert.deepEqual(gone.errors, []);
});

test("nonsense seqs are not sent; reset forgets what was asked (a new token, a restarted host)", async () => {
  const { reads, asked } = marks();
  assert.equal(await reads.mark("s", -1), null);
  assert.equal(await reads.mark("s", 1.5), null);
  await reads.mark("s", 2);
  reads.reset();
  await reads.mark("s", 2);
  assert.deepEqual(asked, [["s", 2], ["s", 2]]);
});
