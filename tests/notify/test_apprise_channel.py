"""`AppriseChannel` against real local servers, and its start-up checks."""

from __future__ import annotations

import logging
from dataclasses import replace

import pytest
from dsh_notify.apprise_channel import AppriseChannel, expand
from dsh_notify.channel import Accepted, Gone, Retry

from dsh import PluginConfigError

from .receivers import smtp, webhook
from .support import message

pytestmark = pytest.mark.anyio


async def test_a_json_webhook_receives_the_title_body_and_link() -> None:
    with webhook() as hook:
        channel = AppriseChannel.from_urls("notify", [hook.url])
        [target] = await channel.targets()
        assert await channel.send(target, message(3)) == Accepted()
    [received] = hook.received
    assert received["title"] == "reminder 3"
    assert received["message"] == "due now\n\n/?session=s1"


async def test_an_email_reaches_a_real_smtp_server() -> None:
    with smtp() as box:
        channel = AppriseChannel.from_urls("notify", [box.url])
        [target] = await channel.targets()
        assert await channel.send(target, replace(message(4), body="")) == Accepted()
    [mail] = box.messages
    assert mail["Subject"] == "reminder 4"
    texts = [part.get_payload(decode=True) for part in mail.walk() if not part.is_multipart()]
    assert any(b"/?session=s1" in text for text in texts)


async def test_a_receiver_that_is_down_is_a_retry() -> None:
    with webhook() as hook:
        hook.down = 1
        channel = AppriseChannel.from_urls("notify", [hook.url])
        [target] = await channel.targets()
        outcome = await channel.send(target, message())
        assert outcome == Retry("json://… did not take it")
        assert await channel.send(target, message()) == Accepted()
    assert len(hook.received) == 1


async def test_a_target_no_longer_configured_is_gone() -> None:
    channel = AppriseChannel.from_urls("notify", [])
    assert await channel.targets() == []
    assert isinstance(await channel.send("apprise:0:deadbeef", message()), Gone)


async def test_target_ids_name_no_secret_and_follow_the_url() -> None:
    urls = ["json://127.0.0.1:1/${HOOK_TOKEN}", "ntfy://ntfy.sh/topic"]
    channel = AppriseChannel.from_urls("notify", urls, {"HOOK_TOKEN": "s3cret"})
    first, second = await channel.targets()
    assert first.startswith("apprise:0:") and second.startswith("apprise:1:")
    assert "s3cret" not in first + second
    other = AppriseChannel.from_urls("notify", ["json://127.0.0.1:1/other"])
    assert (await other.targets())[0] != first


def test_an_unset_variable_is_a_config_error_naming_the_key() -> None:
    with pytest.raises(PluginConfigError) as caught:
        AppriseChannel.from_urls("notify", ["ntfy://ntfy.sh/x", "tgram://${BOT}/${CHAT}"], {})
    assert caught.value.fields == ("plugins.notify.urls[1]",)
    assert "plugins.notify.urls[1]: ${BOT}, ${CHAT} is not set in the environment" in str(
        caught.value
    )


@pytest.mark.parametrize(
    "url", ["nosuch://s3cret@host/path", "s3cret-without-scheme", "tgram://s3cretTOKEN/"]
)
def test_a_url_apprise_cannot_use_is_a_config_error_without_the_secret(
    url: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG), pytest.raises(PluginConfigError) as caught:
        AppriseChannel.from_urls("notify", [url], {})
    assert caught.value.fields == ("plugins.notify.urls[0]",)
    assert "s3cret" not in str(caught.value)
    assert "s3cret" not in caplog.text  # Apprise's own log hides it too
    assert "Apprise cannot use this URL" in str(caught.value)


def test_expand_replaces_names_from_the_environment() -> None:
    assert expand("a/${X}/${Y}", {"X": "1"}) == ("a/1/", ["Y"])
