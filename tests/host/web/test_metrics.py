"""`GET /metrics`: Prometheus text of the Host's metrics and the app's requests."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from dsh.host.host import Host
from dsh.models import ModelError
from dsh.testing import settled
from tests.support.deadlines import until

from .conftest import StorageDouble, StreamingModel

pytestmark = pytest.mark.anyio


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of an exposition, parsed by prometheus_client's own parser."""
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def helps(text: str) -> dict[str, str]:
    return {family.name: family.documentation for family in text_string_to_metric_families(text)}


async def scrape(client: httpx.AsyncClient) -> str:
    response = await client.get("/metrics")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain; version=")
    return response.text


async def test_metrics_need_the_token(anonymous: httpx.AsyncClient) -> None:
    response = await anonymous.get("/metrics")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"


async def test_every_named_metric_is_there_with_its_help(client: httpx.AsyncClient) -> None:
    text = await scrape(client)
    documented = helps(text)
    for name in (
        "dsh_sessions_live",
        "dsh_storage_append_seconds",
        "dsh_storage_unconfirmed_events",
        "dsh_model_requests",
        "dsh_wake_woken",
        "dsh_http_requests",
    ):
        assert documented.get(name), f"{name} is missing or has no HELP"


async def test_a_conversation_is_counted_by_outcome_and_route_template(
    client: httpx.AsyncClient,
    host: Host,
    backend: StorageDouble,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    created = [(await client.post("/api/sessions")).json()["session"]["id"] for _ in range(2)]
    for session_id in created:
        assert await client.post(f"/api/sessions/{session_id}/messages", json={"text": "hi"})
        agent = host.agent(session_id)
        assert agent is not None
        await settled(agent)
    original = StreamingModel.complete

    async def failing(self: StreamingModel, request: Any, on_delta: Any = None) -> Any:
        raise ModelError("model_unavailable", "the test's model is away")

    monkeypatch.setattr(StreamingModel, "complete", failing)
    await client.post(f"/api/sessions/{created[0]}/messages", json={"text": "again"})
    agent = host.agent(created[0])
    assert agent is not None
    await settled(agent)
    monkeypatch.setattr(StreamingModel, "complete", original)
    for session_id in created:  # every write done: the histogram counts it once it returned
        assert await host.live.flush(host.live.get(session_id))
    await client.get("/api/sessions/not-an-id!/events")
    await client.get("/no/such/page")
    found = samples(await scrape(client))
    assert found[("dsh_sessions_live", ())] == 2
    assert found[("dsh_model_requests_total", (("outcome", "ok"),))] == 2
    assert found[("dsh_model_requests_total", (("outcome", "error"),))] == 1
    assert found[("dsh_storage_unconfirmed_events", ())] == 0
    assert found[("dsh_storage_append_seconds_count", ())] == backend.calls["append"] > 0
    assert found[("dsh_wake_woken_total", ())] == 0
    requests = {
        labels: value
        for (name, labels), value in found.items()
        if name == "dsh_http_requests_total"
    }
    route = "/api/sessions/{session_id}/messages"
    assert requests[(("method", "POST"), ("route", route), ("status", "202"))] == 3
    assert requests[(("method", "POST"), ("route", "/api/sessions"), ("status", "201"))] == 2
    assert requests[(("method", "GET"), ("route", "(unmatched)"), ("status", "404"))] == 1
    assert not any(session_id in str(labels) for labels in requests for session_id in created)
    assert not any("not-an-id" in str(labels) for labels in requests)


async def test_unconfirmed_events_are_counted_while_storage_fails(
    client: httpx.AsyncClient, host: Host, backend: StorageDouble
) -> None:
    session_id = (await client.post("/api/sessions")).json()["session"]["id"]
    backend.errors["append"] = OSError(28, "No space left on device")
    agent = host.agent(session_id)
    assert agent is not None
    host.live.append(agent.session, "test/plain", {"n": 1})
    host.live.append(agent.session, "test/plain", {"n": 2})
    await until(lambda: host.catalogue.health().degraded, "the failing writes")
    found = samples(await scrape(client))
    assert found[("dsh_storage_unconfirmed_events", ())] == 2
    del backend.errors["append"]
    assert await host.live.flush(agent.session)
    found = samples(await scrape(client))
    assert found[("dsh_storage_unconfirmed_events", ())] == 0
