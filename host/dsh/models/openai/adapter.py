"""`OpenAIAdapter`: a `ModelAdapter` for any OpenAI-compatible chat-completions server.

One `complete()` is one `POST {base_url}/chat/completions`, streamed (SSE)
when the caller passes `on_delta`, retried per `RetryPolicy`, built and read
for the configured provider profile (`profiles`): reasoning is read from the
profile's field, streamed to the caller's reasoning channel
(`reasoning_channel(on_delta)`, never to the answer) and returned in
`ModelReply.reasoning`.

**Echo.** For a profile with an `echo` field (`generic`: `reasoning_content`),
the adapter remembers whether this server has streamed reasoning in that
field; from then on every request passes it back on tool-calling turns, as
DeepSeek requires (`profiles`). Before it knows — a fresh process resuming a
conversation whose earlier turns carry reasoning — it sends none; if the
server then refuses with HTTP 400 naming the field, the adapter learns from
the refusal and sends the request once more with the reasoning. So a server
that never streams the field is never sent it, and one that needs it back
never fails a turn for want of it.

Errors are `ModelError`s with these codes:

- `model_auth_failed` — HTTP 401/403 (never retried);
- `model_request_rejected` — any other 4xx except 408/409/429, or a redirect
  (the server's own message is included);
- `model_rate_limited` — HTTP 429 after the last retry, or a `Retry-After`
  longer than the policy's cap;
- `model_unavailable` — 5xx/408/409 after the last retry, transport failures
  and timeouts, a stream that broke after text or reasoning was passed on, a server error
  reported inside the stream, or a closed adapter;
- `bad_response` — a body or chunk that is not the protocol.

Cancelling the calling task cancels the request and closes its connection.
The API key is sent only in the `Authorization` header and is removed from
every message this adapter produces.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Mapping
from types import TracebackType
from typing import Any, Self

import httpx

from ...base.clock import Clock, SystemClock
from ..base import DeltaSink, ModelReply, ModelRequest, reasoning_channel
from ..errors import ModelError
from .config import OpenAIConfig, OpenAISettings, resolve_config
from .request import build_body
from .response import ReplyBuilder, error_detail, parse_chunk, read_completion, snippet
from .retry import RetryPolicy, is_retryable_status, retry_after_seconds
from .sse import server_events

__all__ = ["OpenAIAdapter"]

log = logging.getLogger(__name__)

_KEY_HINT = "Check the key in DSH_API_KEY, DEEPSEEK_API_KEY or OPENAI_API_KEY."


def _warn_unsent_sampling(config: OpenAIConfig) -> None:
    """Say once, at start-up, that set sampling parameters will not be sent while thinking."""
    if not config.thinking_on:
        return
    unsent = [
        name
        for name in config.provider.ignored_when_thinking
        if getattr(config, name, None) is not None
    ]
    if unsent:
        log.warning(
            'not sent to %s while the model thinks: %s (set thinking = "disabled" to use them)',
            config.provider.label,
            ", ".join(unsent),
        )


class _Retryable(Exception):
    """One attempt failed in a way that may pass when asked again."""

    def __init__(self, code: str, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.retry_after = retry_after


class _Rejected(ModelError):
    """The server refused the request with `answered` (an HTTP 4xx); `detail` is its message."""

    def __init__(self, message: str, answered: int, detail: str) -> None:
        super().__init__("model_request_rejected", message)
        self.answered = answered
        self.detail = detail


class _Progress:
    """Whether any part of the reply was passed on (then nothing may be retried)."""

    __slots__ = ("delivered",)

    def __init__(self) -> None:
        self.delivered = False


class OpenAIAdapter:
    """Talks to one OpenAI-compatible server; reuse one instance, `aclose()` it at the end.

    Raises `ModelConfigError` when `config` has no key for a remote server.
    `clock` paces retries (tests pass a `FakeClock`); `rng` draws the jitter.
    """

    name = "openai"

    def __init__(
        self,
        config: OpenAIConfig,
        *,
        clock: Clock | None = None,
        rng: random.Random | None = None,
        policy: RetryPolicy | None = None,
    ) -> None:
        config.require_key()
        self.config = config
        _warn_unsent_sampling(config)
        self.clock: Clock = clock or SystemClock()
        self.policy = policy or RetryPolicy()
        self._rng = rng or random.Random()
        self._key = config.api_key.get_secret_value()
        self._echoing = False
        headers = {"Authorization": f"Bearer {self._key}"} if self._key else {}
        self._client = httpx.AsyncClient(
            headers=headers,
            timeout=httpx.Timeout(
                connect=config.connect_timeout,
                read=config.read_timeout,
                write=config.read_timeout,
                pool=config.connect_timeout,
            ),
            # Proxy variables are meant for the outside world, not for a model on this machine.
            trust_env=not config.loopback,
        )

    @classmethod
    def from_env(
        cls,
        overrides: OpenAISettings | Mapping[str, Any] | None = None,
        *,
        env: Mapping[str, str] | None = None,
        clock: Clock | None = None,
        rng: random.Random | None = None,
    ) -> OpenAIAdapter:
        """An adapter configured by `resolve_config(overrides, env=env)` (see `config`)."""
        return cls(resolve_config(overrides, env=env), clock=clock, rng=rng)

    @property
    def description(self) -> str:
        """`openai <model> at <base URL>`, for the start-up log: never the key, and the URL
        without any user, password or query it was given (they may hold a secret)."""
        url = httpx.URL(str(self.config.base_url)).copy_with(
            username=None, password=None, query=None, fragment=None
        )
        return f"openai {self.config.model} at {url}"

    def __repr__(self) -> str:
        config = self.config
        return f"<OpenAIAdapter {config.model} at {config.base_url} ({config.profile})>"

    async def aclose(self) -> None:
        """Close the connection pool; later calls fail with `model_unavailable`."""
        await self._client.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    # -- one completion ----------------------------------------------------

    async def complete(
        self, request: ModelRequest, on_delta: DeltaSink | None = None
    ) -> ModelReply:
        """Answer `request`, streaming text to `on_delta` when given. Raises `ModelError`."""
        stream = on_delta is not None
        body = self._body(request, stream=stream)
        retry = 0
        while True:
            try:
                return await self._attempt(body, on_delta)
            except _Rejected as refusal:
                echoed = self._echo_asked(request, refusal, body, stream=stream)
                if echoed is None:
                    raise
                body = echoed
            except ModelError as error:
                if self._key and self._key in error.message:
                    raise ModelError(error.code, self._redact(error.message)) from None
                raise
            except _Retryable as failure:
                attempts = retry + 1
                delay = None
                if retry < self.config.max_retries:
                    delay = self.policy.delay(retry, self._rng, failure.retry_after)
                if delay is None:
                    raise ModelError(failure.code, self._giving_up(failure, attempts)) from None
                log.warning(
                    "model request failed (%s); retry %d of %d in %.2f s",
                    failure.message,
                    attempts,
                    self.config.max_retries,
                    delay,
                )
                await self.clock.sleep(delay)
                retry = attempts

    def _body(self, request: ModelRequest, *, stream: bool) -> dict[str, Any]:
        echo = self.config.provider.echo if self._echoing else None
        return build_body(request, self.config, stream=stream, echo=echo)

    def _learn(self, builder: ReplyBuilder) -> None:
        """Echo from now on if the server streamed reasoning in the profile's echo field."""
        echo = self.config.provider.echo
        if echo is not None and not self._echoing and builder.reasoning_field == echo:
            self._echoing = True
            log.info(
                "the model server at %s streams %s: passing it back on tool-calling turns",
                self.config.base_url,
                echo,
            )

    def _echo_asked(
        self, request: ModelRequest, refusal: _Rejected, body: dict[str, Any], *, stream: bool
    ) -> dict[str, Any] | None:
        """The body to send again if `refusal` asks for the echo field this body lacked."""
        echo = self.config.provider.echo
        if echo is None or self._echoing or refusal.answered != 400 or echo not in refusal.detail:
            return None
        echoed = build_body(request, self.config, stream=stream, echo=echo)
        if echoed == body:
            return None
        self._echoing = True
        log.info(
            "the model server at %s asks for %s back: passing it back on tool-calling turns",
            self.config.base_url,
            echo,
        )
        return echoed

    def _giving_up(self, failure: _Retryable, attempts: int) -> str:
        if failure.retry_after is not None and failure.retry_after > self.policy.retry_after_cap:
            return (
                f"{failure.message}; the server asks to wait {failure.retry_after:.0f} s, "
                f"longer than dsh waits ({self.policy.retry_after_cap:.0f} s)"
            )
        return f"{failure.message} (gave up after {attempts} attempt{'s' * (attempts > 1)})"

    async def _attempt(self, body: dict[str, Any], on_delta: DeltaSink | None) -> ModelReply:
        """One request. Raises `_Retryable` only while nothing was passed to `on_delta`."""
        progress = _Progress()
        if self._client.is_closed:
            raise ModelError("model_unavailable", f"{self!r} is closed")
        try:
            async with self._client.stream("POST", self.config.endpoint, json=body) as response:
                if not response.is_success:
                    await response.aread()
                    raise self._status_error(response)
                if "text/event-stream" in response.headers.get("content-type", ""):
                    return await self._read_stream(response, on_delta, progress)
                await response.aread()
                builder = read_completion(response.text, self.config.provider.reasoning_fields)
                self._learn(builder)
                reply = builder.reply()
        except httpx.DecodingError as error:
            raise ModelError("bad_response", f"the reply could not be decoded: {error}") from None
        except httpx.TransportError as error:
            reason = f"{type(error).__name__}: {error}".rstrip(": ")
            where = self.config.base_url
            if progress.delivered:
                raise ModelError(
                    "model_unavailable",
                    f"the connection to {where} broke while streaming: {reason}",
                ) from None
            raise _Retryable(
                "model_unavailable", f"could not reach the model server at {where}: {reason}"
            ) from None
        thoughts = reasoning_channel(on_delta)
        if thoughts is not None and reply.reasoning:
            thoughts(reply.reasoning)
        if on_delta is not None and reply.text:
            on_delta(reply.text)
        return reply

    async def _read_stream(
        self, response: httpx.Response, on_delta: DeltaSink | None, progress: _Progress
    ) -> ModelReply:
        builder = ReplyBuilder()
        fields = self.config.provider.reasoning_fields
        thoughts = reasoning_channel(on_delta)
        finished = False
        async for event in server_events(response.aiter_lines()):
            if event.data.strip() == "[DONE]":
                finished = True
                break
            if event.name == "error":
                raise ModelError(
                    "model_unavailable",
                    f"the server reported an error while streaming: {snippet(event.data)}",
                )
            choice = parse_chunk(event.data).first
            if choice is None:
                continue
            finished = finished or choice.finish_reason is not None
            delta = choice.delta
            if delta is None:
                continue
            found = delta.reasoning(fields)
            if found is not None and found[1]:
                field, reasoning = found
                progress.delivered = True
                builder.add_reasoning(reasoning, field=field)
                if thoughts is not None:
                    thoughts(reasoning)
            for fragment in delta.tool_calls or ():
                builder.add_tool_call(fragment)
            if delta.content:
                progress.delivered = True
                builder.add_text(delta.content)
                if on_delta is not None:
                    on_delta(delta.content)
        if not finished:
            raise ModelError(
                "bad_response",
                "the stream ended before the reply was complete (no finish_reason, no [DONE])",
            )
        self._learn(builder)
        return builder.reply()

    def _status_error(self, response: httpx.Response) -> Exception:
        status = response.status_code
        detail = self._redact(error_detail(response.text))
        where = f"the model server at {self.config.base_url}"
        answered = f"{where} answered HTTP {status} {response.reason_phrase}".rstrip()
        if status in (401, 403):
            return ModelError(
                "model_auth_failed",
                f"{where} refused the API key (HTTP {status}: {detail}). {_KEY_HINT}",
            )
        if is_retryable_status(status):
            return _Retryable(
                "model_rate_limited" if status == 429 else "model_unavailable",
                f"{answered}: {detail}",
                retry_after_seconds(response.headers, self.clock.wall_ms()),
            )
        hint = ""
        if status == 404:
            hint = (
                f" Check DSH_MODEL_BASE_URL ({self.config.base_url}) and "
                f"DSH_MODEL ({self.config.model})."
            )
        return _Rejected(
            f"{where} rejected the request (HTTP {status}: {detail}).{hint}", status, detail
        )

    def _redact(self, text: str) -> str:
        return text.replace(self._key, "***") if self._key else text
