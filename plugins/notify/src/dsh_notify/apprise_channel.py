"""`AppriseChannel`: alerts to any service Apprise knows (ntfy, e-mail, Telegram, …).

The overlay's `urls` are Apprise URLs; `${NAME}` in one is replaced by the
environment variable `NAME` when the plugin starts, so a token need not sit
in the overlay file. Rules:

1. Every URL is checked when the plugin starts: an unset `${NAME}`, or a URL
   Apprise cannot use, is a `dsh.PluginConfigError` naming its overlay key
   (`plugins.notify.urls[2]`). A message shows a URL only as its scheme
   (`tgram://…`): the rest may be a secret. Apprise's own log lines about a
   URL it cannot use are dropped while it is checked: they quote the URL,
   and its masking misses secrets in some places (a user name, a URL with
   an unknown scheme).
2. Each URL is one target, `apprise:<index>:<8 hex of the URL as written>`
   — the id names no secret (`${NAME}` is hashed unexpanded) and changes
   when the URL does, so a delivery recorded for a URL since removed from
   the overlay answers `Gone`.
3. `send` runs Apprise (blocking I/O with its own timeouts) in a worker
   thread; the title is the alert's title, the body its body and a line
   with the link to the Session. Apprise answers only yes or no, so a
   "no" is a `Retry` (its log, which hides secrets, says why).
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial

import anyio.to_thread
import apprise

from dsh import PluginConfigError

from .channel import Accepted, Gone, Message, Outcome, Retry

__all__ = ["AppriseChannel", "AppriseTarget", "expand"]

_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def expand(url: str, environ: Mapping[str, str]) -> tuple[str, list[str]]:
    """`url` with every `${NAME}` replaced from `environ`, and the names that are unset."""
    unset: list[str] = []

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in environ:
            unset.append(name)
            return ""
        return environ[name]

    return _REFERENCE.sub(value, url), unset


def _shown(url: str) -> str:
    """A URL as messages may show it: its scheme only."""
    match = _SCHEME.match(url)
    return f"{match.group(1)}://…" if match else "a URL without a scheme"


class _Drop(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return False


def _quietly_added(service: apprise.Apprise, url: str) -> bool:
    """`service.add(url)` without Apprise's log lines (rule 1)."""
    logger = logging.getLogger("apprise")
    drop = _Drop()
    logger.addFilter(drop)
    try:
        return bool(service.add(url))
    finally:
        logger.removeFilter(drop)


@dataclass(frozen=True, slots=True)
class AppriseTarget:
    """One configured URL: its id (rule 2), scheme and Apprise instance."""

    id: str
    shown: str
    service: apprise.Apprise


class AppriseChannel:
    """The `apprise` channel (see the module docstring)."""

    name = "apprise"

    def __init__(self, targets: Sequence[AppriseTarget] = ()) -> None:
        self._targets = {target.id: target for target in targets}

    @classmethod
    def from_urls(
        cls, plugin: str, urls: Sequence[str], environ: Mapping[str, str] | None = None
    ) -> AppriseChannel:
        """The channel for the overlay's `urls` (rule 1); `PluginConfigError` for a bad one."""
        environ = os.environ if environ is None else environ
        targets, problems, fields = [], [], []
        for index, written in enumerate(urls):
            key = f"plugins.{plugin}.urls[{index}]"
            url, unset = expand(written, environ)
            service = apprise.Apprise()
            if unset:
                names = ", ".join(f"${{{name}}}" for name in unset)
                problems.append(f"{key}: {names} is not set in the environment")
            elif not _quietly_added(service, url):
                problems.append(f"{key}: Apprise cannot use this URL ({_shown(written)})")
            else:
                digest = hashlib.sha256(written.encode()).hexdigest()[:8]
                targets.append(AppriseTarget(f"apprise:{index}:{digest}", _shown(written), service))
                continue
            fields.append(key)
        if problems:
            raise PluginConfigError(
                plugin, f"invalid config for plugin {plugin!r}: " + "; ".join(problems), fields
            )
        return cls(targets)

    async def targets(self) -> Sequence[str]:
        return list(self._targets)

    async def send(self, target: str, message: Message) -> Outcome:
        found = self._targets.get(target)
        if found is None:
            return Gone("this Apprise URL is no longer in the overlay")
        body = f"{message.body}\n\n{message.url}" if message.body else message.url
        notify = partial(found.service.notify, title=message.title, body=body)
        if await anyio.to_thread.run_sync(notify):
            return Accepted()
        return Retry(f"{found.shown} did not take it")
