"""`PluginRoutes`: the HTTP routes the loaded plugins serve (`dsh_web_routes`), after the host's.

It is one route of the app, added last, so every host route is tried
first: a plugin cannot shadow one. It asks the Host's contributions for the
plugins' routes on each request (they are computed once per set of loaded
plugins), so a plugin loaded or unloaded while the app runs is served or
gone at once. Matching follows Starlette's router: the first full match
handles the request; failing that, a route that matched the path but not
the method answers (405). The access guard in front of the app treats these
paths like any other: `/api/...` needs the token, the rest does not.
"""

from __future__ import annotations

from typing import Any

from starlette.datastructures import URLPath
from starlette.routing import BaseRoute, Match, NoMatchFound
from starlette.types import Receive, Scope, Send

from .state import WebState

__all__ = ["PluginRoutes"]

_CHOSEN = "dsh.plugin_route"


class PluginRoutes(BaseRoute):
    """Every loaded plugin's routes, as one route of the app (module docstring)."""

    def _routes(self, scope: Scope) -> list[BaseRoute]:
        app = scope.get("app")
        state: WebState | None = getattr(getattr(app, "state", None), "web", None)
        return [] if state is None else state.host.contributions.web_routes()

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        partial: tuple[Match, Scope] | None = None
        for route in self._routes(scope):
            match, child = route.matches(scope)
            if match is Match.FULL:
                return match, {**child, _CHOSEN: route}
            if match is Match.PARTIAL and partial is None:
                partial = (match, {**child, _CHOSEN: route})
        return partial or (Match.NONE, {})

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        route: BaseRoute = scope[_CHOSEN]
        await route.handle(scope, receive, send)

    def url_path_for(self, name: str, /, **path_params: Any) -> URLPath:
        raise NoMatchFound(name, path_params)
