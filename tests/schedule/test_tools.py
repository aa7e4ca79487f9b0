from __future__ import annotations

from typing import Any

import pytest

from dsh_tool_schedule.protocol import MAX_SAFE_INTEGER
from dsh_tool_schedule.tools import MAX_PROMPT_CHARS, UNSUPPORTED_RULES

from .conftest import Harness, changes

pytestmark = pytest.mark.anyio


async def test_the_three_tools_are_registered_with_strict_schemas(harness: Harness) -> None:
    agent = harness.open()
    assert agent.tools.names() == ["schedule_create", "schedule_list", "schedule_delete"]
    schemas = {schema["function"]["name"]: schema["function"] for schema in agent.tools.schemas()}
    create = schemas["schedule_create"]["parameters"]
    assert create["required"] == ["prompt", "after_seconds"]
    assert set(create["properties"]) == {"prompt", "after_seconds"}
    assert create["properties"]["after_seconds"]["type"] == "integer"
    assert create["additionalProperties"] is False
    assert "invalid_rule" in schemas["schedule_create"]["description"]
    assert schemas["schedule_delete"]["parameters"]["required"] == ["id"]
    assert schemas["schedule_list"]["parameters"]["properties"] == {}


async def test_create_stores_the_trimmed_prompt_and_returns_the_view(harness: Harness) -> None:
    agent = harness.open()
    view = await harness.value(agent, "schedule_create", prompt="  stretch\n", after_seconds=10)
    assert view == {
        "id": "rem-1",
        "kind": "after",
        "prompt": "stretch",
        "afterSeconds": 10,
        "scheduledAt": "2026-01-01T00:00:10.000Z",
        "state": "scheduled",
        "deliveryMode": "session-local",
    }
    assert changes(agent.session) == [
        {
            "version": 1,
            "change": "create",
            "record": {
                "id": "rem-1",
                "kind": "after",
                "prompt": "stretch",
                "afterSeconds": 10,
                "scheduledAt": "2026-01-01T00:00:10.000Z",
            },
        }
    ]


@pytest.mark.parametrize("rule", UNSUPPORTED_RULES)
@pytest.mark.parametrize("value", ["2026-01-02T00:00:00Z", 60, None])
async def test_other_rule_families_are_rejected_not_ignored(
    harness: Harness, rule: str, value: Any
) -> None:
    agent = harness.open()
    error = await harness.error(
        agent, "schedule_create", prompt="stretch", after_seconds=10, **{rule: value}
    )
    assert error["code"] == "invalid_rule"
    assert rule in error["message"]
    assert changes(agent.session) == []
    assert harness.listener(agent).flushes == 0


async def test_a_rule_family_without_after_seconds_is_still_invalid_rule(harness: Harness) -> None:
    agent = harness.open()
    error = await harness.error(agent, "schedule_create", prompt="x", cron="* * * * *")
    assert error["code"] == "invalid_rule"


@pytest.mark.parametrize(
    "seconds", [0, -5, MAX_SAFE_INTEGER + 1, True, 10.0, 10.5, "10", None, [10]]
)
async def test_after_seconds_must_be_a_positive_safe_integer(
    harness: Harness, seconds: Any
) -> None:
    agent = harness.open()
    error = await harness.error(agent, "schedule_create", prompt="stretch", after_seconds=seconds)
    assert error["code"] == "invalid_rule"
    assert "after_seconds" in error["message"]
    assert harness.listener(agent).flushes == 0


async def test_missing_after_seconds_is_invalid_rule(harness: Harness) -> None:
    agent = harness.open()
    error = await harness.error(agent, "schedule_create", prompt="stretch")
    assert error["code"] == "invalid_rule"


@pytest.mark.parametrize(
    "prompt", ["", "   ", "\n\t ", 5, None, ["stretch"], "x" * (MAX_PROMPT_CHARS + 1)]
)
async def test_empty_whitespace_non_text_or_too_long_prompts_are_invalid_prompt(
    harness: Harness, prompt: Any
) -> None:
    agent = harness.open()
    error = await harness.error(agent, "schedule_create", prompt=prompt, after_seconds=10)
    assert error["code"] == "invalid_prompt"
    assert changes(agent.session) == []
    assert harness.listener(agent).flushes == 0


async def test_missing_prompt_is_invalid_prompt(harness: Harness) -> None:
    agent = harness.open()
    error = await harness.error(agent, "schedule_create", after_seconds=10)
    assert error["code"] == "invalid_prompt"


async def test_the_prompt_limit_counts_characters_after_trimming(harness: Harness) -> None:
    agent = harness.open()
    longest = "伸" * MAX_PROMPT_CHARS
    view = await harness.value(agent, "schedule_create", prompt=f"  {longest}  ", after_seconds=10)
    assert view["prompt"] == longest


async def test_unknown_arguments_fail_the_strict_input_model(harness: Harness) -> None:
    agent = harness.open()
    error = await harness.error(agent, "schedule_create", prompt="x", after_seconds=1, when="now")
    assert error["code"] == "invalid_arguments"
    error = await harness.error(agent, "schedule_list", verbose=True)
    assert error["code"] == "invalid_arguments"
    error = await harness.error(agent, "schedule_delete", id=1)
    assert error["code"] == "invalid_arguments"
    error = await harness.error(agent, "schedule_delete")
    assert error["code"] == "invalid_arguments"
