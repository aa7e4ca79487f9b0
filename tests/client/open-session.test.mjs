import assert from "node:assert/strict";
import { test } from "node:test";

import { ApiError } from "../../host/dsh/web/static/api.js";
import { OpenSession } from "../../host/dsh/web/static/open-session.js";
import { SessionDirectory } from "../../host/dsh/web/static/sessions.js";
import { FakeServer, FakeTimers } from "./fake-server.mjs";

function open({ id = "0123456789abcdef", live = false } = {}) {
  const server = new FakeServer({ header: { id, version: 1 } });
  let changes = 0;
  const session = new OpenSession({
    id,
    fetchEvents: server.fetchEvents,
    openLive: server.openLive,
    live,
    timers: new FakeTimers(),
    onChange: () => (changes += 1),
  });
  return { server, session, changes: () => changes };
}

async function settle(server) {
  for (let round = 0; round < 5; round += 1) {
    for (const conn of server.pendingConnections()) server.accept(conn);
    for (const conn of server.busyConnections()) while (conn.queue.length > 0 && !conn.done) server.deliver(conn);
    for (const request of [...server.requests]) server.respond(request);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

test("its title: a session/title in the window, else the list's, else a short id", async () => {
  const { server, session, changes } = open();
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
  assert.equal(session.facts.live, true, "a sent message resumes a cold Session");
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
  const { session } = open({ live: true });
  assert.equal(await session.recover({ getSession: async () => ({ live: true }) }, "x"), false, "nothing changed");
  const id = session.queue("held");
  session.pending.queued(id, 0);
  assert.equal(await session.recover({ getSession: async () => ({ live: true }) }, "gone"), false);
  assert.equal(session.pending.list()[0].state, "queued");
  assert.equal(await session.recover({ getSession: async () => ({ live: false }) }, "gone"), true);
  assert.deepEqual(session.pending.list().map((item) => [item.state, item.error]), [["failed", "gone"]]);
  assert.equal(session.facts.live, false, "the host restarted: the Session is cold now");
  session.close();
});

test("the facts: the detail at open, then state and live frames; a slower detail never undoes a frame", async () => {
  const server = new FakeServer({ header: { id: "s", version: 1 } });
  let changes = 0;
  const session = new OpenSession({
    id: "s",
    fetchEvents: server.fetchEvents,
    openLive: server.openLive,
    detail: { live: false, plugins: { "tool-schedule": { reminders: [] } } },
    timers: new FakeTimers(),
    onChange: () => (changes += 1),
  });
  assert.equal(session.facts.live, false);
  assert.deepEqual(session.facts.states(), { "tool-schedule": { reminders: [] } });
  assert.equal(server.connections.length, 1, "a cold Session's stream is followed too");
  server.accept(server.connections[0]);
  const conn = server.connections[0];
  conn.queue.push({ kind: "state", plugin: "tool-schedule", state: { reminders: [{ id: "rem-1" }] } });
  conn.queue.push({ kind: "live", live: true });
  conn.queue.push({ kind: "state", plugin: "other", state: { n: 1 } });
  let slow;
  const asked = session.refreshDetail({ getSession: () => new Promise((resolve) => (slow = resolve)) });
  while (conn.queue.length > 0) server.deliver(conn);
  await settle(server);
  assert.equal(session.facts.live, true);
  assert.deepEqual(session.facts.state("tool-schedule"), { reminders: [{ id: "rem-1" }] });
  assert.ok(changes >= 3);
  slow({ live: false, plugins: {} });
  assert.equal(await asked, false, "frames came while it was in flight: the answer is older");
  assert.equal(session.facts.live, true);
  // A fresh detail wins; a plugin it does not list has no state any more.
  assert.equal(await session.refreshDetail({ getSession: async () => ({ live: true, plugins: { "tool-schedule": { reminders: [] } } }) }), true);
  assert.deepEqual(session.facts.states(), { "tool-schedule": { reminders: [] } });
  // A state frame of null removes it.
  conn.queue.push({ kind: "state", plugin: "tool-schedule", state: null });
  server.deliver(conn);
  assert.deepEqual(session.facts.states(), {});
  session.close();
});
