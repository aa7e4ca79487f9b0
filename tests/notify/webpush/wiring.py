"""`PushOnlyPlugin`: the smallest plugin that serves `WebPush` in a real Host (tests only).

dsh-notify's own plugin class (`NotifyPlugin`) wires `WebPush` the same way
— routes from `dsh_web_routes`, the page module from `dsh_client_modules`,
`open()` before anything is sent, `aclose()` when the plugin unloads — along
with the outbox this branch does not have. The browser test loads this one
through a temporary entry point, as `dsh web` loads any plugin.
"""

from __future__ import annotations

from typing import ClassVar

from dsh_notify.config import NotifyConfig
from dsh_notify.webpush import WebPush
from starlette.routing import BaseRoute

from dsh import ClientModule, PluginContext, hookimpl

ENTRY_POINT = "webpush-test"


class PushOnlyPlugin:
    Config: ClassVar[type[NotifyConfig]] = NotifyConfig

    def __init__(self, context: PluginContext[NotifyConfig]) -> None:
        self.push = WebPush(context)
        context.group.start_soon(self.push.open)
        context.scope.add(self.push.aclose)

    @hookimpl
    def dsh_web_routes(self) -> list[BaseRoute]:
        return self.push.routes()

    @hookimpl
    def dsh_client_modules(self) -> list[ClientModule]:
        return self.push.client_modules()
