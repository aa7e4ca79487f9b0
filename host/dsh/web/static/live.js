// The live stream transport: a WebSocket whose messages are JSON frames.
// It matches the `openLive` contract of the session window.

/**
 * Open `url` with `WebSocketImpl` and report decoded frames to `onFrame`.
 * `onClose(info)` is called once when the stream ends by itself (server
 * close, network error, or an undecodable frame); never after `close()`.
 */
export function openWebSocket({ url, WebSocketImpl = globalThis.WebSocket, onFrame, onClose }) {
  const socket = new WebSocketImpl(url);
  let done = false;

  function finish(info) {
    if (done) return;
    done = true;
    onClose(info);
  }

  socket.addEventListener("message", (message) => {
    if (done) return;
    let frame;
    try {
      frame = JSON.parse(message.data);
    } catch {
      finish({ code: 0, reason: "undecodable frame" });
      socket.close();
      return;
    }
    onFrame(frame);
  });
  socket.addEventListener("close", (event) => {
    finish({ code: event?.code ?? 0, reason: event?.reason ?? "" });
  });
  socket.addEventListener("error", () => {
    // A close event always follows an error; report once, from there.
  });

  return {
    close() {
      if (done) return;
      done = true;
      socket.close(1000, "client closed");
    },
  };
}
