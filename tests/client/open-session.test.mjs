import assert from "node:assert/strict";
import { test } from "node:test";

import { ApiError } from "../../host/dsh/web/static/api.js";
import { OpenSession } from "../../host/dsh/web/static/open-session.js";
import { SessionDirectory } from "../../host/dsh/web/static/sessions.js";
import { FakeServer, FakeTimers } from "./fake-server.mjs";

function open({ id = "0123456789abcdef", live = false, stream = true } = {}) {
  const server = new FakeServer({ header: { id, version: 1 } });
  let changes = 0;
  const session = new OpenSession({
    id,
    fetchEvents: server.fetchEvents,
    openLive: stream ? server.openLive : null,
    live,
    timers: new FakeTimers(),
    onChange: () => (changes += 1),
  });
  return { server, session, changes: () => changes };
}

async function settle(server) {
  for (const request of [...server.requests]) server.respond(request);
  await new Promise((resolve) => setImmediate(resolve));
}

test("its title: a session/title in the window, else the list's, else a short id", async () => {
  const { server, session, changes } = open({ stream: false });
  const directory = new SessionDirectory({ api: null, report() {}, unsupported() {} });
  assert.equal(session.title(directory), "0123456789ab…");
  directory.add({ id: session.id, title: "From the list" });
  assert.equal(session.title(directory), "From the list");
  server.append("session/title", { title: "From the log" });
  server.flush();
  await settle(server);
  assert.equal(session.title(directory), "From the log");
  assert.ok(changes() > 0);
  session.close();
  assert.equal(session.window.status, "closed");
});

test("post: a 202 queues with the host's length; failures say whether the host may have it", async () => {
  const { session } = open();
  const answers = [
    async () => ({ queued: true, session: { length: 4 } }),
    async () => {
      throw new ApiError(422, "invalid_body", "too long");
    },
    async () => {
      throw new ApiError(503, "host_closed", "closing");
    },
    async () => {
      throw new ApiError(0, "network", "Failed to fetch");
    },
  ];
  const sent = [];
  const api = {
    sendMessage: (id, text, options) => {
      sent.push([id, text, options]);
      return answers.shift()();
    },
  };
  const ids = ["a", "b", "c", "d"].map((text) => session.queue(text));
  for (const [index, id] of ids.entries()) {
    const ok = await session.post(api, id, ["a", "b", "c", "d"][index], { timeZone: "UTC", offline: "host away" });
    assert.equal(ok, index === 0);
  }
  assert.deepEqual(sent[0], [session.id, "a", { timeZone: "UTC" }]);
  assert.deepEqual(session.pending.list().map((item) => [item.state, item.queuedAt, item.reason, item.error]), [
    ["queued", 4, null, null],
    ["failed", null, "rejected", "too long"],
    ["failed", null, "error", "closing"],
    ["failed", null, "error", "host away"],
  ]);
  assert.equal(session.window.snapshot().live, true, "a sent message makes the window follow the stream");
  assert.equal(session.requeue(ids[1]), "b");
  assert.equal(session.requeue(ids[0]), null);
  session.close();
});

test("stop: one request at a time; a refusal reaches the caller", async () => {
  const { session } = open();
  let release;
  const api = { cancel: () => new Promise((resolve) => (release = resolve)) };
  const first = session.stop(api);
  assert.equal(session.stopping, true);
  assert.equal(await session.stop(api), null);
  release({ cancelled: true });
  assert.equal(await first, true);
  assert.equal(session.stopping, false);
  const refusing = { cancel: async () => Promise.reject(new ApiError(404, "not_found", "no route")) };
  await assert.rejects(session.stop(refusing), { status: 404 });
  assert.equal(session.stopping, false);
  session.close();
});

test("after a reconnect, queued messages are lost only if the host says the Session is cold", async () => {
  const { session } = open();
  assert.equal(await session.checkLost({ getSession: () => assert.fail("nothing queued: nothing asked") }, "x"), false);
  const id = session.queue("held");
  session.pending.queued(id, 0);
  assert.equal(await session.checkLost({ getSession: async () => ({ live: true }) }, "gone"), false);
  assert.equal(session.pending.list()[0].state, "queued");
  assert.equal(await session.checkLost({ getSession: async () => ({ live: false }) }, "gone"), true);
  assert.deepEqual(session.pending.list().map((item) => [item.state, item.error]), [["failed", "gone"]]);
  session.close();
});

test("a cold Session is followed on the stream: the host waking it shows what it delivers", async () => {
  const { server, session } = open({ live: false });
  assert.equal(session.window.snapshot().live, true, "the window follows the stream while cold");
  assert.equal(session.window.snapshot().sessionLive, false);
  const [conn] = server.connections;
  server.accept(conn);
  server.deliver(conn); // hello
  await settle(server);
  assert.equal(session.window.snapshot().loaded, true);
  // A reminder falls due: the host wakes the Session and its events stream in.
  server.append("session/end-seed", {});
  conn.queue.push({ kind: "live", live: true });
  server.append("message/user", { text: "[Scheduled reminder] stretch", source: { kind: "schedule" } });
  while (conn.queue.length > 0) server.deliver(conn);
  const snap = session.window.snapshot();
  assert.equal(snap.sessionLive, true);
  assert.deepEqual(snap.events.map((event) => event.type), ["session/end-seed", "message/user"]);
  conn.queue.push({ kind: "live", live: false }); // hibernated again
  conn.queue.push({ kind: "live", live: "maybe" }); // not a boolean: ignored
  while (conn.queue.length > 0) server.deliver(conn);
  assert.equal(session.window.snapshot().sessionLive, false);
  session.close();
});
