import assert from "node:assert/strict";
import { test } from "node:test";

import { ApiError, createApi, isUnsupported } from "../../host/dsh/web/static/api.js";
import { FakeHttpHost } from "./fake-server.mjs";

function fakeFetch(reply) {
  const calls = [];
  const fetch = async (url, init) => {
    calls.push({ url, init });
    const { status = 200, body = {} } = reply(url, init) ?? {};
    const text = typeof body === "string" ? body : JSON.stringify(body);
    return { ok: status >= 200 && status < 300, status, text: async () => text };
  };
  return { calls, fetch };
}

test("every request carries the bearer token and JSON bodies", async () => {
  const { calls, fetch } = fakeFetch((url) => {
    if (url === "/api/sessions") return { status: 201, body: { session: { id: "s1" } } };
    if (url.endsWith("/fork")) return { status: 201, body: { session: { id: "child" } } };
    return { status: 202, body: {} };
  });
  const api = createApi({ token: "T0K", fetch });
  assert.deepEqual(await api.createSession(), { id: "s1" });
  assert.deepEqual(await api.fork("s 1", 4), { id: "child" });
  await api.fork("s1");
  await api.sendMessage("s1", "hi");
  await api.resume("s1");
  for (const call of calls) assert.equal(call.init.headers.Authorization, "Bearer T0K");
  assert.deepEqual(
    calls.map((call) => [call.init.method, call.url, call.init.body]),
    [
      ["POST", "/api/sessions", "{}"],
      ["POST", "/api/sessions/s%201/fork", '{"atSeq":4}'],
      ["POST", "/api/sessions/s1/fork", "{}"],
      ["POST", "/api/sessions/s1/messages", '{"text":"hi"}'],
      ["POST", "/api/sessions/s1/resume", "{}"],
    ],
  );
  assert.equal(calls[0].init.headers["Content-Type"], "application/json");
});

test("history queries carry from, before and limit", async () => {
  const { calls, fetch } = fakeFetch(() => ({ body: { events: [], tail: 0 } }));
  const api = createApi({ token: "t", fetch });
  await api.events("s1", { limit: 200 });
  await api.events("s1", { from: 5, limit: 10 });
  await api.events("s1", { before: 9, limit: 3 });
  await api.events("s1");
  assert.deepEqual(calls.map((call) => call.url), [
    "/api/sessions/s1/events?limit=200",
    "/api/sessions/s1/events?from=5&limit=10",
    "/api/sessions/s1/events?before=9&limit=3",
    "/api/sessions/s1/events",
  ]);
  assert.equal(calls[0].init.method, "GET");
  assert.equal(calls[0].init.body, undefined);
});

test("lists unwrap their envelopes", async () => {
  const { fetch } = fakeFetch((url) => {
    if (url === "/api/sessions") return { body: { sessions: [{ id: "a" }] } };
    if (url === "/api/client-modules") return { body: { modules: [{ plugin: "p" }] } };
    if (url === "/api/health") return { body: { ok: true, version: "1" } };
    return { body: { header: { id: "a" }, live: true } };
  });
  const api = createApi({ token: "t", fetch });
  assert.deepEqual(await api.listSessions(), [{ id: "a" }]);
  assert.deepEqual(await api.clientModules(), [{ plugin: "p" }]);
  assert.deepEqual(await api.health(), { ok: true, version: "1" });
  assert.equal((await api.getSession("a")).live, true);
  const empty = createApi({ token: "t", fetch: fakeFetch(() => ({ body: {} })).fetch });
  assert.deepEqual(await empty.listSessions(), []);
  assert.deepEqual(await empty.clientModules(), []);
});

test("errors become ApiError with the server's code and message", async () => {
  const api = createApi({
    token: "t",
    fetch: fakeFetch((url) => {
      if (url.includes("missing")) return { status: 404, body: { error: { code: "not_found", message: "no session" } } };
      if (url.includes("html")) return { status: 502, body: "<html>bad gateway</html>" };
      return { status: 500, body: "" };
    }).fetch,
  });
  await assert.rejects(api.getSession("missing"), (err) => {
    assert.ok(err instanceof ApiError);
    assert.deepEqual([err.status, err.code, err.message], [404, "not_found", "no session"]);
    return true;
  });
  await assert.rejects(api.getSession("html"), { status: 502, code: "http_error", message: "HTTP 502" });
  await assert.rejects(api.getSession("x"), { status: 500, code: "http_error" });
  const offline = createApi({
    token: "t",
    fetch: async () => {
      throw new TypeError("Failed to fetch");
    },
  });
  await assert.rejects(offline.health(), { status: 0, code: "network", message: "Failed to fetch" });
  const unreadable = createApi({
    token: "t",
    fetch: async () => ({ ok: true, status: 200, text: async () => { throw new Error("reset"); } }),
  });
  assert.equal(await unreadable.health(), null);
});

test("the live URL is a WebSocket URL with the token as a query parameter", () => {
  const api = createApi({ token: "a b&c", fetch: async () => null });
  assert.equal(
    api.liveUrl("s1", { protocol: "http:", host: "127.0.0.1:8765" }),
    "ws://127.0.0.1:8765/api/sessions/s1/live?token=a%20b%26c",
  );
  assert.equal(
    api.liveUrl("s1", { protocol: "https:", host: "example.org" }),
    "wss://example.org/api/sessions/s1/live?token=a%20b%26c",
  );
});

test("second edition: search, rename, delete and cancel use the routes of DESIGN §9", async () => {
  const { calls, fetch } = fakeFetch((url, init) => {
    if (init.method === "PATCH") return { body: { session: { id: "s1", title: "New" } } };
    if (init.method === "DELETE") return { status: 204, body: "" };
    if (url.endsWith("/cancel")) return { body: { cancelled: true } };
    return { body: { sessions: [] } };
  });
  const api = createApi({ token: "t", fetch });
  await api.listSessions({ q: "  tea & cake " });
  await api.listSessions({ q: "   " });
  assert.deepEqual(await api.renameSession("s 1", "New"), { id: "s1", title: "New" });
  assert.equal(await api.deleteSession("s1"), null);
  assert.deepEqual(await api.cancel("s1"), { cancelled: true });
  await api.sendMessage("s1", "hi", { timeZone: "Asia/Shanghai" });
  await api.sendMessage("s1", "hi", { timeZone: "" });
  assert.deepEqual(
    calls.map((call) => [call.init.method, call.url, call.init.body]),
    [
      ["GET", "/api/sessions?q=tea%20%26%20cake", undefined],
      ["GET", "/api/sessions", undefined],
      ["PATCH", "/api/sessions/s%201", '{"title":"New"}'],
      ["DELETE", "/api/sessions/s1", undefined],
      ["POST", "/api/sessions/s1/cancel", "{}"],
      ["POST", "/api/sessions/s1/messages", '{"text":"hi","timeZone":"Asia/Shanghai"}'],
      ["POST", "/api/sessions/s1/messages", '{"text":"hi"}'],
    ],
  );
  const bare = createApi({ token: "t", fetch: fakeFetch(() => ({ body: { id: "s1", title: "Bare" } })).fetch });
  assert.deepEqual(await bare.renameSession("s1", "Bare"), { id: "s1", title: "Bare" }, "a summary without an envelope");
});

test("a host without a route or method is told apart from a missing Session", async () => {
  const old = new FakeHttpHost({ secondEdition: false });
  old.addSession("a");
  const api = createApi({ token: "t", fetch: old.fetch });
  for (const call of [() => api.renameSession("a", "x"), () => api.deleteSession("a"), () => api.cancel("a")]) {
    await assert.rejects(call(), (err) => isUnsupported(err));
  }
  const current = new FakeHttpHost();
  const next = createApi({ token: "t", fetch: current.fetch });
  await assert.rejects(next.cancel("missing"), (err) => err.code === "session_not_found" && !isUnsupported(err));
  await assert.rejects(next.renameSession("missing", "x"), (err) => err.status === 404 && !isUnsupported(err));
  assert.equal(isUnsupported(new ApiError(501, "x", "")), true);
  assert.equal(isUnsupported(new ApiError(500, "x", "")), false);
  assert.equal(isUnsupported(new Error("405")), false);
});

test("against the fake host: titles, search, rename, delete and cancel behave as DESIGN §9 says", async () => {
  const host = new FakeHttpHost();
  host.addSession("a", { events: [["message/user", { text: "Buy tea\nand cake", source: { kind: "user" } }]] });
  host.addSession("b");
  const api = createApi({ token: "t", fetch: host.fetch });
  assert.deepEqual((await api.listSessions()).map((s) => [s.id, s.title]), [["a", "Buy tea"], ["b", null]]);
  assert.deepEqual((await api.listSessions({ q: "TEA" })).map((s) => s.id), ["a"]);
  const renamed = await api.renameSession("b", "  Bike  ");
  assert.equal(renamed.title, "Bike");
  assert.equal(host.servers.get("b").log.at(-1).type, "session/title");
  await assert.rejects(api.renameSession("b", " "), { status: 422 });
  assert.deepEqual((await api.listSessions({ q: "bike" })).map((s) => s.id), ["b"]);
  assert.deepEqual(await api.cancel("a"), { cancelled: true });
  assert.equal(host.servers.get("a").log.at(-1).data.error.code, "cancelled");
  assert.deepEqual(await api.cancel("a"), { cancelled: false });
  assert.equal(await api.deleteSession("a"), null);
  assert.deepEqual((await api.listSessions()).map((s) => s.id), ["b"]);
  await assert.rejects(api.getSession("a"), { status: 404, code: "session_not_found" });
});

test("third edition: read marks and the host-wide stream's URL (with since after a reconnect)", async () => {
  const { calls, fetch } = fakeFetch(() => ({ body: { unread: 2 } }));
  const api = createApi({ token: "a b", fetch });
  assert.deepEqual(await api.markRead("s/1", 12), { unread: 2 });
  assert.equal(calls[0].url, "/api/sessions/s%2F1/read");
  assert.equal(calls[0].init.method, "POST");
  assert.deepEqual(JSON.parse(calls[0].init.body), { throughSeq: 12 });
  const where = { protocol: "https:", host: "example.org" };
  assert.equal(api.everywhereUrl(null, where), "wss://example.org/api/live?token=a%20b");
  assert.equal(api.everywhereUrl(1_700_000_000_123, where), "wss://example.org/api/live?token=a%20b&since=1700000000123");
  assert.equal(api.everywhereUrl(-1, { protocol: "http:", host: "h" }), "ws://h/api/live?token=a%20b", "nonsense since is left out");
});
