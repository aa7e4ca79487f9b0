"""`OffChannel`: a channel turned off has no targets and ends what was left for it."""

from __future__ import annotations

import pytest
from dsh_notify.channel import Gone
from dsh_notify.off import OffChannel

from .support import message

pytestmark = pytest.mark.anyio


async def test_an_off_channel_has_no_targets_and_answers_gone() -> None:
    channel = OffChannel("webpush", "Web Push is off")
    assert await channel.targets() == []
    assert await channel.send("sub", message()) == Gone("Web Push is off")
