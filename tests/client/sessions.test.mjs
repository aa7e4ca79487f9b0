import assert from "node:assert/strict";
import { test } from "node:test";

import { createApi } from "../../host/dsh/web/static/api.js";
import { SessionDirectory } from "../../host/dsh/web/static/sessions.js";
import { FakeHttpHost } from "./fake-server.mjs";

function setup(options = {}) {
  const host = new FakeHttpHost(options);
  const reported = [];
  const directory = new SessionDirectory({
    api: createApi({ token: "t", fetch: host.fetch }),
    report: (err) => reported.push(["error", err.message]),
    unsupported: (feature, err) => reported.push(["unsupported", feature, err.status]),
  });
  let changes = 0;
  directory.subscribe(() => (changes += 1));
  return { host, directory, reported, changes: () => changes };
}

test("the list comes from the host; titles are remembered, an empty one is not", async () => {
  const { host, directory, changes } = setup();
  host.addSession("a", { title: "Tea" });
  host.addSession("b", { title: "  " });
  await directory.refresh();
  assert.deepEqual(directory.sessions.map((s) => s.id), ["a", "b"]);
  assert.equal(directory.title("a"), "Tea");
  assert.equal(directory.title("b"), undefined);
  assert.equal(changes(), 1);
  directory.add({ id: "c", title: "New" });
  assert.deepEqual(directory.sessions.map((s) => s.id), ["c", "a", "b"]);
  assert.equal(directory.find("c").title, "New");
  assert.equal(directory.syncLength("a", 5), true);
  assert.equal(directory.find("a").length, 5);
  assert.equal(directory.syncLength("a", 3), false, "never lowered");
  assert.equal(directory.syncLength("zzz", 3), false);
});

test("a newer search wins over an older answer that arrives late", async () => {
  const { host, directory } = setup();
  host.addSession("alpha", { title: "alpha" });
  host.addSession("beta", { title: "beta" });
  const first = directory.search("alp");
  const second = directory.search("bet");
  await Promise.all([first, second]);
  assert.equal(directory.query, "bet");
  assert.deepEqual(directory.sessions.map((s) => s.id), ["beta"]);
  host.failNext("GET", "^/api/sessions$", { status: 500, body: { error: { code: "x", message: "later" } } });
  const stale = directory.search("");
  const fresh = directory.search("alp");
  await Promise.all([stale, fresh]);
  assert.deepEqual(directory.sessions.map((s) => s.id), ["alpha"]);
});

test("rename and remove: done, refused, or a host without the routes", async () => {
  const { host, directory, reported } = setup();
  host.addSession("a");
  await directory.refresh();
  assert.equal(await directory.rename("a", "Named"), true);
  assert.equal(directory.find("a").title, "Named");
  assert.equal(directory.title("a"), "Named");
  host.failNext("PATCH", ".", { status: 422, body: { error: { code: "invalid_body", message: "too long" } } });
  assert.equal(await directory.rename("a", "x"), false);
  assert.equal(await directory.remove("a"), true);
  assert.deepEqual(directory.sessions, []);
  assert.equal(directory.title("a"), undefined);
  assert.deepEqual(reported, [["error", "too long"]]);

  const old = setup({ secondEdition: false });
  old.host.addSession("b");
  await old.directory.refresh();
  assert.equal(await old.directory.rename("b", "x"), false);
  assert.equal(await old.directory.remove("b"), false);
  assert.deepEqual(old.reported, [["unsupported", "featureRename", 405], ["unsupported", "featureDelete", 405]]);
  assert.deepEqual(old.directory.sessions.map((s) => s.id), ["b"]);
});

test("without an API nothing is asked", async () => {
  const directory = new SessionDirectory({ api: null, report: () => assert.fail(), unsupported: () => assert.fail() });
  await directory.refresh();
  assert.equal(await directory.rename("a", "b"), false);
  assert.equal(await directory.remove("a"), false);
});

test("a background read that cannot reach the host says nothing; an asked-for one reports it", async () => {
  const reported = [];
  const down = async () => {
    throw new TypeError("Failed to fetch");
  };
  const directory = new SessionDirectory({
    api: createApi({ token: "t", fetch: down }),
    report: (err) => reported.push(err.message),
    unsupported: () => {},
  });
  await directory.refresh({ background: true });
  assert.deepEqual(reported, []);
  await directory.refresh();
  assert.deepEqual(reported, ["Failed to fetch"]);
});
