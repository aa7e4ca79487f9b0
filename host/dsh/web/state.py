"""What the routes of one web app share: the running Host and the app's helpers.

The app is built before its Host may be running (`dsh web` enters the Host
in the app's lifespan), so routes look the state up per request through
`web_state()`; until it is attached they answer 503 `host_starting`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from starlette.types import ASGIApp

from ..base.scope import Disposer
from ..host.host import Host
from .errors import ApiError
from .frames import GOING_AWAY, FrameQueue, encode_frame
from .history import History
from .live import LiveHub
from .settings import WebSettings

__all__ = ["WebState", "web_state"]


@dataclass(slots=True)
class WebState:
    """The running Host, the live-stream hub, the history reader of one app and the
    queues of its pages' `WS /api/live` connections."""

    host: Host
    settings: WebSettings
    hub: LiveHub
    history: History
    pages: set[FrameQueue] = field(default_factory=set)
    _unwatch: Disposer | None = None

    @classmethod
    def start(cls, host: Host, settings: WebSettings) -> WebState:
        """Build the helpers and start observing `host`'s live Sessions and its list."""
        hub = LiveHub(host, queue_frames=settings.queue_frames)
        hub.start()
        state = cls(host=host, settings=settings, hub=hub, history=History(host))
        state._unwatch = host.sessions.watch_list(state._list_changed)
        return state

    def _list_changed(self) -> None:
        """Tell every page the list changed (`{"kind": "sessions"}`): it reads it again."""
        frame = encode_frame({"kind": "sessions"})
        for page in list(self.pages):
            page.put(frame)

    def close(self) -> None:
        """Stop observing and end every live stream (idempotent)."""
        if self._unwatch is not None:
            self._unwatch()
            self._unwatch = None
        self.hub.close()
        for page in list(self.pages):
            page.end(GOING_AWAY)


def web_state(app: ASGIApp) -> WebState:
    """The state attached to `app`; raises `ApiError` 503 before it is attached."""
    state = getattr(getattr(app, "state", None), "web", None)
    if not isinstance(state, WebState):
        raise ApiError(503, "host_starting", "the host is not running yet; retry shortly")
    return state
