"""`NotifyPlugin`: the entry point `notify` in the `dsh.plugins` group.

The loader instantiates it once per Host with a validated `NotifyConfig`
(`[plugins.notify]`). Construction is cheap and does no I/O, but checks
every channel: a bad Apprise URL or an unset `${NAME}` is a
`dsh.PluginConfigError` naming `plugins.notify.urls[i]` (`apprise_channel`).

- Channels: `apprise` (the overlay's `urls`) and `webpush` (`WebPush`, when
  `web_push = true`; otherwise an `OffChannel` that ends what an earlier run
  left for it).
- The outbox (`outbox.outbox_for`) is kept where the Host keeps its
  Sessions; the alert sink (`recorder.Recorder`, subscribed to
  `PluginContext.alerts`) records one delivery per alert and target and
  returns once it is durable.
- One task in the Host's group (stopped when the plugin's scope closes):
  open the outbox and Web Push — retried while storage refuses, the sink
  waiting meanwhile — then run the `sender`.
- `dsh_health`: `{"notify": {"pending", "failed", "failing": {channel: since
  ms}}}`, from memory.
- `dsh_web_routes`, `dsh_client_modules`: Web Push's, when it is on.
- `/metrics`: `dsh_notify_deliveries_total{channel,outcome}` (`measures`).
- `dsh_store_copy`: `dsh store copy SRC DST` moves the outbox, the Web Push
  key pair and the subscriptions too (`store_copy`).
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Awaitable, Sequence
from typing import TYPE_CHECKING, ClassVar, Protocol

from dsh import JsonLike, StorageError, TaskSet, hookimpl

from .apprise_channel import AppriseChannel
from .backoff import storage_delay
from .config import NotifyConfig
from .measures import DeliveryMeasures
from .off import OffChannel
from .outbox import outbox_for
from .recorder import Recorder
from .sender import Sender

if TYPE_CHECKING:
    from starlette.routing import BaseRoute

    from dsh import ClientModule, PluginContext, StorageLocation

    from .channel import Channel

__all__ = ["NotifyPlugin", "PushService"]

log = logging.getLogger(__name__)


class PushService(Protocol):
    """What the plugin uses of `dsh_notify.webpush.WebPush` (Web Push for one host)."""

    async def open(self) -> None: ...

    @property
    def channel(self) -> Channel: ...

    def routes(self) -> list[BaseRoute]: ...

    def client_modules(self) -> list[ClientModule]: ...

    async def aclose(self) -> None: ...


class NotifyPlugin:
    """Alerts reach a person with the tab closed (see the module docstring)."""

    Config: ClassVar[type[NotifyConfig]] = NotifyConfig

    def __init__(self, context: PluginContext[NotifyConfig | None]) -> None:
        config = context.config if context.config is not None else NotifyConfig()
        self.context = context
        self.config = config
        self.apprise = AppriseChannel.from_urls(context.name, config.urls)
        self.web_push: PushService | None = None
        if config.web_push:
            # Imported only when on: its dependencies (pywebpush, cryptography) load only then.
            webpush = importlib.import_module(".webpush", __package__)
            self.web_push = webpush.WebPush(context)
        self.outbox = outbox_for(context.storage)
        self.measures = DeliveryMeasures(
            context.metrics, context.scope, lambda: self.outbox.counts.pruned
        )
        self.sender = Sender(
            self.outbox, context.clock, self.measures, max_attempts=config.max_attempts
        )
        self.sender.add(self.apprise)
        if self.web_push is None:
            self.sender.add(OffChannel("webpush", "Web Push is off in the overlay"))
        self.recorder = Recorder(self.outbox, self._channels, context.clock, self.sender.wake)
        self._tasks = TaskSet(context.group, name=f"plugin {context.name}")
        context.scope.add(self.outbox.aclose)
        if self.web_push is not None:
            context.scope.add(self.web_push.aclose)
        context.scope.add(self._tasks.aclose)
        context.alerts.subscribe(self.recorder, scope=context.scope)
        self._tasks.start_soon(self._run, name=f"plugin {context.name}: sender")

    def _channels(self) -> Sequence[Channel]:
        return list(self.sender.channels.values())

    async def _run(self) -> None:
        trouble = 0
        while True:
            try:
                await self.outbox.open()
                if self.web_push is not None:
                    await self.web_push.open()
                break
            except StorageError as error:
                trouble += 1
                delay = storage_delay(trouble)
                log.warning("notify: cannot start: %s; trying again in %g s", error, delay)
                await self.context.clock.sleep(delay)
        if self.web_push is not None:
            self.sender.add(self.web_push.channel)
        self.recorder.ready.set()
        await self.sender.run()

    @hookimpl
    def dsh_health(self) -> dict[str, JsonLike]:
        counts = self.outbox.counts
        failing: dict[str, JsonLike] = dict(self.sender.failing)
        return {"notify": {"pending": counts.pending, "failed": counts.failed, "failing": failing}}

    @hookimpl
    def dsh_web_routes(self) -> Sequence[BaseRoute]:
        return [] if self.web_push is None else self.web_push.routes()

    @hookimpl
    def dsh_client_modules(self) -> list[ClientModule]:
        return [] if self.web_push is None else self.web_push.client_modules()

    @hookimpl
    def dsh_store_copy(
        self, source: StorageLocation, target: StorageLocation
    ) -> Awaitable[str | None] | None:
        # Imported here: only `dsh store copy` needs it, and it loads Web Push's dependencies.
        from .store_copy import store_copy

        return store_copy(source, target)
