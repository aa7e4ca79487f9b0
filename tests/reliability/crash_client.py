"""The client side of the crash rounds: a random workload and a ledger of what it was told.

`CrashClient` drives one `dsh web` process (a `WebHost`) the way a browser
would — new Sessions, reminder requests for the demo model, lists, cancels,
forks, resumes and history reads — and keeps every acknowledgement it got:

- `acked`: Sessions answered 201 (created or forked), with the fork's parent;
- `queued`: messages answered 202, by `(session, text)`;
- `watches`: every live stream it held, with every frame it was sent;
- `pages`: every history page it read.

`Killer` SIGKILLs the process at a chosen moment from a timer thread, so the
crash lands wherever the host happens to be: mid-request, mid-turn, while a
reminder is due.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from tests.support.webhost import WebHost

from .live_watch import LiveWatch

__all__ = ["Acked", "CrashClient", "Dead", "Killer", "Page"]

DELAYS = (1, 2, 3)


class Dead(Exception):
    """The host process is gone (killed): the round's workload ends here."""


@dataclass(frozen=True)
class Acked:
    """A Session the host answered 201 for."""

    kind: str  # "create" or "fork"
    parent: str | None
    round: int


@dataclass(frozen=True)
class Page:
    """One history page as the client received it."""

    round: int
    session_id: str
    body: dict[str, Any]


class Killer:
    """SIGKILLs one `WebHost` process at an armed moment (re-armable until it fires)."""

    def __init__(self, web: WebHost) -> None:
        self._web = web
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()
        self.fired = threading.Event()
        self.reason = ""
        self.aimed = False

    def arm(self, delay: float, reason: str, *, aimed: bool = False) -> None:
        with self._lock:
            if self.fired.is_set():
                return
            if self._timer is not None:
                self._timer.cancel()
            self.reason = reason
            self.aimed = self.aimed or aimed
            self._timer = threading.Timer(max(delay, 0.0), self._kill)
            self._timer.daemon = True
            self._timer.start()

    def _kill(self) -> None:
        with self._lock:
            self.fired.set()
        self._web.kill()

    def cancel(self) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()


@dataclass
class CrashClient:
    """The workload and its ledger (see the module docstring)."""

    web: WebHost
    rng: random.Random
    max_sessions: int
    counters: Counter[str] = field(default_factory=Counter)
    statuses: Counter[str] = field(default_factory=Counter)
    acked: dict[str, Acked] = field(default_factory=dict)
    queued: Counter[tuple[str, str]] = field(default_factory=Counter)
    watches: list[LiveWatch] = field(default_factory=list)
    pages: list[Page] = field(default_factory=list)
    reminder_ids: dict[str, set[str]] = field(default_factory=dict)
    round: int = 0
    policy: str = "random"
    killer: Killer | None = None
    _watched: dict[str, LiveWatch] = field(default_factory=dict)
    _live: set[str] = field(default_factory=set)
    _serial: int = 0

    # -- rounds -------------------------------------------------------------

    def begin_round(self, number: int, killer: Killer, policy: str) -> None:
        self.round = number
        self.killer = killer
        self.policy = policy
        self._watched = {}
        self._live = set()

    def round_watches(self) -> list[LiveWatch]:
        return [watch for watch in self.watches if watch.round == self.round]

    def round_pages(self) -> list[Page]:
        return [page for page in self.pages if page.round == self.round]

    def run_first(self, operation: Callable[[], None]) -> None:
        """Run one chosen operation (a dead process ends it quietly)."""
        try:
            operation()
        except Dead:
            return

    def run_operations(self, count: int) -> None:
        """Run `count` random operations, stopping early once the process is dead."""
        operations: list[tuple[float, Callable[[], None]]] = [
            (2.0, self.new_session),
            (4.0, self.remind),
            (1.0, self.list_reminders),
            (1.5, self.cancel_reminder),
            (1.0, self.hello),
            (1.5, self.fork),
            (1.5, self.resume),
            (1.0, self.read_history),
        ]
        weights = [weight for weight, _ in operations]
        for _ in range(count):
            if self.killer is not None and self.killer.fired.is_set():
                return
            ((_, operation),) = self.rng.choices(operations, weights)
            try:
                operation()
            except Dead:
                return

    # -- HTTP ---------------------------------------------------------------

    def _call(self, kind: str, method: str, path: str, body: Any = None) -> httpx.Response:
        try:
            response = self.web.request(
                method, path, **({} if body is None else {"json": body}), timeout=15
            )
        except httpx.TransportError as error:
            raise Dead(str(error)) from error
        self.statuses[f"{kind} {response.status_code}"] += 1
        if response.status_code >= 500:
            self.counters["http_5xx"] += 1
        return response

    def _next(self) -> int:
        self._serial += 1
        return self._serial

    def _watch(self, session_id: str) -> None:
        if session_id in self._watched:
            return
        watch = LiveWatch.open(self.web.ws_base, self.web.token, session_id, self.round)
        self._watched[session_id] = watch
        self.watches.append(watch)
        self.counters["streams_opened"] += 1

    def _target(self) -> str | None:
        """A Session to talk to: usually one live in this round, else any acknowledged one."""
        if not self.acked:
            return None
        live = sorted(self._live)
        if live and self.rng.random() < 0.75:
            return self.rng.choice(live)
        return self.rng.choice(sorted(self.acked))

    def _post_message(self, session_id: str, text: str) -> bool:
        self._watch(session_id)
        response = self._call(
            "message", "POST", f"/api/sessions/{session_id}/messages", {"text": text}
        )
        if response.status_code == 202:
            self.queued[session_id, text] += 1
            self._live.add(session_id)
            return True
        return False

    # -- operations ---------------------------------------------------------

    def new_session(self) -> None:
        if len(self.acked) >= self.max_sessions:
            return self.remind()
        response = self._call("create", "POST", "/api/sessions")
        if response.status_code == 201:
            session_id = response.json()["session"]["id"]
            self.acked[session_id] = Acked("create", None, self.round)
            self._live.add(session_id)
            self.counters["sessions_created"] += 1
            self._watch(session_id)
        return None

    def remind(self) -> None:
        session_id = self._target()
        if session_id is None:
            return self.new_session()
        delay = self.rng.choice(DELAYS)
        prompt = f"stretch r{self.round}-{self._next()}"
        sent_at = time.monotonic()
        if self._post_message(session_id, f"remind me in {delay} seconds to {prompt}"):
            self.counters["reminders_requested"] += 1
            if self.policy == "at-due" and self.killer is not None and not self.killer.aimed:
                # Around the moment the reminder falls due: before, during or just
                # after its dispatch (the enqueue → durable-dispatch window).
                jitter = self.rng.uniform(-0.03, 0.15)
                self.killer.arm(sent_at + delay + jitter - time.monotonic(), "at-due", aimed=True)
        return None

    def list_reminders(self) -> None:
        session_id = self._target()
        if session_id is not None:
            self._post_message(session_id, "list reminders")

    def cancel_reminder(self) -> None:
        session_id = self._target()
        if session_id is None:
            return
        known = sorted(self.reminder_ids.get(session_id, ()))
        reminder = self.rng.choice(known) if known else f"rem-{self.rng.randint(1, 3)}"
        self._post_message(session_id, f"cancel reminder {reminder}")

    def hello(self) -> None:
        session_id = self._target()
        if session_id is not None:
            self._post_message(session_id, f"hello r{self.round}-{self._next()}")

    def fork(self) -> None:
        if not self.acked or len(self.acked) >= self.max_sessions:
            return
        parent = self.rng.choice(sorted(self.acked))
        body: dict[str, Any] | None = None
        if self.rng.random() < 0.35:
            described = self._call("read", "GET", f"/api/sessions/{parent}")
            if described.status_code != 200:
                return
            body = {"atSeq": self.rng.randint(0, described.json()["length"])}
        response = self._call("fork", "POST", f"/api/sessions/{parent}/fork", body)
        if response.status_code == 201:
            child = response.json()["session"]["id"]
            self.acked[child] = Acked("fork", parent, self.round)
            self._live.add(child)
            self.counters["sessions_forked"] += 1
            self._watch(child)

    def resume(self) -> None:
        cold = sorted(set(self.acked) - self._live)
        if not cold:
            return
        session_id = self.rng.choice(cold)
        self._watch(session_id)
        response = self._call("resume", "POST", f"/api/sessions/{session_id}/resume")
        if response.status_code == 200:
            self._live.add(session_id)
            self.counters["resumes"] += 1
            if self.policy == "after-resume" and self.killer is not None and not self.killer.aimed:
                # An overdue reminder fires as soon as the resumed root is published.
                self.killer.arm(self.rng.uniform(0.0, 0.08), "after-resume", aimed=True)

    def read_history(self) -> None:
        session_id = self._target()
        if session_id is None:
            return
        response = self._call(
            "history", "GET", f"/api/sessions/{session_id}/events?from=0&limit=500"
        )
        if response.status_code == 200:
            self.pages.append(Page(self.round, session_id, response.json()))

    # -- what the client learnt ---------------------------------------------

    def learn_reminder_ids(self) -> None:
        """Remember the ids of reminders the client saw created (for later cancels)."""
        for watch in self.round_watches():
            for event in watch.events():
                data = event.get("data")
                if event["type"] == "tool/result" and isinstance(data, dict):
                    value = data.get("value")
                    if data.get("name") == "schedule_create" and isinstance(value, dict):
                        self.reminder_ids.setdefault(watch.session_id, set()).add(value["id"])
