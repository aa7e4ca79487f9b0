"""A stand-in push service: a real local HTTP endpoint that decrypts and checks what a host pushes.

`PushService` listens on 127.0.0.1 (a thread, `ThreadingHTTPServer`) and
answers each POST with the next scripted `(status, headers)` (201 once the
script is used up), recording every request. `Browser` is the other end of a
subscription: a P-256 key pair and a 16-byte auth secret, as a browser
makes them; `browser.open(request)` decrypts a recorded body with the real
RFC 8291 scheme (`http_ece`), and `vapid_claims(request, public_key)`
verifies the RFC 8292 `Authorization: vapid t=…, k=…` header — the JWT's
ES256 signature against the host's public key — and returns its claims.
"""

from __future__ import annotations

import json
import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import http_ece
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from dsh_notify.webpush.encoding import b64url, unb64url


@dataclass(frozen=True)
class Pushed:
    """One request the service received."""

    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class PushService:
    """See the module docstring; `url(path)` is an endpoint on it."""

    base: str = ""
    script: list[tuple[int, dict[str, str]]] = field(default_factory=list)
    received: list[Pushed] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def url(self, path: str = "/push/abc") -> str:
        return f"{self.base}{path}"

    def answer(self) -> tuple[int, dict[str, str]]:
        with self._lock:
            return self.script.pop(0) if self.script else (201, {})


@contextmanager
def push_service() -> Iterator[PushService]:
    """A running `PushService`, stopped afterwards."""
    service = PushService()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            body = self.rfile.read(length)
            headers = {key.lower(): value for key, value in self.headers.items()}
            with service._lock:
                service.received.append(Pushed(self.path, headers, body))
            status, extra = service.answer()
            self.send_response(status)
            for key, value in extra.items():
                self.send_header(key, value)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    service.base = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield service
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@dataclass
class Browser:
    """The browser side of one subscription."""

    key: ec.EllipticCurvePrivateKey = field(
        default_factory=lambda: ec.generate_private_key(ec.SECP256R1())
    )
    auth: bytes = field(default_factory=lambda: secrets.token_bytes(16))

    @property
    def p256dh(self) -> str:
        return b64url(
            self.key.public_key().public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)
        )

    def subscription(self, endpoint: str) -> dict[str, Any]:
        """What `PushSubscription.toJSON()` gives."""
        return {
            "endpoint": endpoint,
            "expirationTime": None,
            "keys": {"p256dh": self.p256dh, "auth": b64url(self.auth)},
        }

    def open(self, pushed: Pushed) -> dict[str, Any]:
        """The decrypted payload of `pushed` (RFC 8291, aes128gcm), as JSON."""
        assert pushed.headers["content-encoding"] == "aes128gcm"
        plaintext = http_ece.decrypt(
            pushed.body, private_key=self.key, auth_secret=self.auth, version="aes128gcm"
        )
        decoded: dict[str, Any] = json.loads(plaintext)
        return decoded


def vapid_claims(pushed: Pushed, public_key: str) -> dict[str, Any]:
    """The JWT claims of `pushed`'s VAPID header, after checking `k` and the ES256 signature."""
    scheme, _, params = pushed.headers["authorization"].partition(" ")
    assert scheme == "vapid"
    parts = dict(item.strip().split("=", 1) for item in params.split(","))
    assert parts["k"] == public_key, "the VAPID key is not the one GET /api/push/key gives"
    header, claims, signature = parts["t"].split(".")
    assert json.loads(unb64url(header)) == {"typ": "JWT", "alg": "ES256"}
    raw = unb64url(signature)
    key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64url(public_key))
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    try:
        key.verify(der, f"{header}.{claims}".encode(), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        raise AssertionError("the VAPID JWT's signature does not verify") from None
    decoded: dict[str, Any] = json.loads(unb64url(claims))
    return decoded
