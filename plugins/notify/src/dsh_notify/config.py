"""`NotifyConfig`: the overlay table `[plugins.notify]` (DESIGN §14.2, public keys).

    [plugins.notify]
    web_push = true                      # the page may subscribe this browser
    urls = ["ntfy://ntfy.sh/${TOPIC}"]   # Apprise URLs; ${NAME} from the environment
    allow_insecure_endpoints = false     # http:// push endpoints (loopback tests only)
    max_attempts = 8                     # then a delivery is `failed` (about an hour)
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["NotifyConfig"]


class NotifyConfig(BaseModel):
    """The `[plugins.notify]` table (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    web_push: bool = False
    urls: list[Annotated[str, Field(min_length=1, max_length=4096)]] = Field(
        default_factory=list, max_length=100
    )
    allow_insecure_endpoints: bool = False
    max_attempts: Annotated[int, Field(ge=1, le=100)] = 8
    max_subscriptions: Annotated[int, Field(ge=1, le=1000)] = 50
