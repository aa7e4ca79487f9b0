import assert from "node:assert/strict";
import { test } from "node:test";

import { openWebSocket } from "../../host/dsh/web/static/live.js";

class FakeSocket {
  static last = null;

  constructor(url) {
    this.url = url;
    this.listeners = {};
    this.closedWith = null;
    FakeSocket.last = this;
  }

  addEventListener(type, listener) {
    (this.listeners[type] ??= []).push(listener);
  }

  emit(type, event) {
    for (const listener of this.listeners[type] ?? []) listener(event);
  }

  close(code, reason) {
    this.closedWith = { code, reason };
  }
}

function open() {
  const frames = [];
  const closes = [];
  const handle = openWebSocket({
    url: "ws://h/api/sessions/s1/live?token=t",
    WebSocketImpl: FakeSocket,
    onFrame: (frame) => frames.push(frame),
    onClose: (info) => closes.push(info),
  });
  return { handle, frames, closes, socket: FakeSocket.last };
}

test("frames are decoded JSON; a server close is reported once", () => {
  const { frames, closes, socket } = open();
  assert.equal(socket.url, "ws://h/api/sessions/s1/live?token=t");
  socket.emit("message", { data: '{"kind":"hello","tail":3}' });
  socket.emit("error", {});
  socket.emit("close", { code: 1013, reason: "slow" });
  socket.emit("close", {});
  socket.emit("message", { data: '{"kind":"delta","text":"late"}' });
  assert.deepEqual(frames, [{ kind: "hello", tail: 3 }]);
  assert.deepEqual(closes, [{ code: 1013, reason: "slow" }]);
});

test("an undecodable frame ends the stream", () => {
  const { frames, closes, socket } = open();
  socket.emit("message", { data: "not json" });
  assert.deepEqual(frames, []);
  assert.deepEqual(closes, [{ code: 0, reason: "undecodable frame" }]);
  assert.notEqual(socket.closedWith, null);
});

test("closing from the client reports nothing back", () => {
  const { handle, closes, socket } = open();
  handle.close();
  handle.close();
  socket.emit("close", undefined);
  assert.deepEqual(closes, []);
  assert.deepEqual(socket.closedWith, { code: 1000, reason: "client closed" });
});
