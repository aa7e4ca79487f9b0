from __future__ import annotations

from typing import Any

import pytest

from dsh_tool_schedule.protocol import MAX_SAFE_INTEGER
from dsh_tool_schedule.tools import MAX_PROMPT_CHARS, RULE_FIELDS

from .conftest import Harness, changes

pytestmark = pytest.mark.anyio

TOOLS = ["schedule_create", "schedule_update", "schedule_list", "schedule_delete"]


async def test_the_four_tools_are_registered_with_strict_schemas(harness: Harness) -> None:
    agent = harness.open()
    assert agent.tools.names() == TOOLS
    schemas = {schema["function"]["name"]: schema["function"] for schema in agent.tools.schemas()}
    create = schemas["schedule_create"]["parameters"]
    assert create["required"] == ["prompt"]
    assert set(create["properties"]) == {
        "prompt",
        *RULE_FIELDS,
        "time_zone",
        "until",
        "count",
        "misfire",
    }
    assert create["properties"]["every_seconds"]["type"] == "integer"
    assert create["properties"]["misfire"]["enum"] == ["latest", "skip"]
    assert create["additionalProperties"] is False
    update = schemas["schedule_update"]["parameters"]
    assert update["required"] == ["id", "revision"]
    assert set(update["properties"]) == {"id", "revision", "paused"} | set(create["properties"])
    assert update["additionalProperties"] is False
    assert schemas["schedule_delete"]["parameters"]["required"] == ["id"]
    assert schemas["schedule_list"]["parameters"]["properties"] == {}
    for name in TOOLS:
        assert "session" in schemas[name]["description"].lower() or name == "schedule_update"


async def test_create_stores_the_trimmed_prompt_and_returns_the_view(harness: Harness) -> None:
    agent = harness.open()
    view = await harness.value(agent, "schedule_create", prompt="  stretch\n", after_seconds=10)
    assert view == {
        "id": "rem-1",
        "prompt": "stretch",
        "rule": {"kind": "after", "seconds": 10},
        "ruleText": "once, 10 seconds after it was set",
        "timeZone": "UTC",
        "nextAt": "2026-01-01T00:00:10.000Z",
        "nextAtLocal": "2026-01-01T00:00:10+00:00",
        "state": "scheduled",
        "revision": 1,
        "delivered": 0,
        "until": None,
        "count": None,
        "misfire": "latest",
        "deliveryMode": "session-local",
        "firesWhenClosed": False,
    }
    assert changes(agent.session) == [
        {
            "version": 2,
            "change": "create",
            "record": {
                "id": "rem-1",
                "prompt": "stretch",
                "rule": {"kind": "after", "seconds": 10},
                "timeZone": "UTC",
                "firstAt": "2026-01-01T00:00:10.000Z",
                "nextAt": "2026-01-01T00:00:10.000Z",
                "misfire": "latest",
                "paused": False,
                "revision": 1,
            },
        }
    ]


@pytest.mark.parametrize(
    ("arguments", "kind"),
    [
        ({"at": "2026-01-02T09:00"}, "at"),
        ({"every_seconds": 3600}, "every"),
        ({"every_seconds": 3600, "at": "2026-01-02T09:00"}, "every"),
        ({"cron": "0 9 * * MON-FRI"}, "cron"),
    ],
)
async def test_each_rule_kind_creates_a_reminder(
    harness: Harness, arguments: dict[str, Any], kind: str
) -> None:
    agent = harness.open()
    view = await harness.value(agent, "schedule_create", prompt="x", **arguments)
    assert view["rule"]["kind"] == kind
    assert view["state"] == "scheduled"


@pytest.mark.parametrize("misfire", ["latest", "skip"])
async def test_misfire_is_taken_as_given(harness: Harness, misfire: str) -> None:
    agent = harness.open()
    view = await harness.value(
        agent, "schedule_create", prompt="x", every_seconds=60, misfire=misfire
    )
    assert view["misfire"] == misfire


async def test_null_arguments_of_a_create_are_left_out(harness: Harness) -> None:
    agent = harness.open()
    view = await harness.value(
        agent,
        "schedule_create",
        prompt="x",
        after_seconds=5,
        at=None,
        every_seconds=None,
        cron=None,
        time_zone=None,
        until=None,
        count=None,
        misfire=None,
    )
    assert view["rule"] == {"kind": "after", "seconds": 5}


@pytest.mark.parametrize(
    "rules",
    [
        {},
        {"after_seconds": 10, "at": "2026-01-02T09:00"},
        {"after_seconds": 10, "cron": "0 9 * * *"},
        {"every_seconds": 60, "cron": "0 9 * * *"},
        {"at": "2026-01-02T09:00", "cron": "0 9 * * *"},
    ],
)
async def test_exactly_one_rule_is_required(harness: Harness, rules: dict[str, Any]) -> None:
    agent = harness.open()
    error = await harness.error(agent, "schedule_create", prompt="x", **rules)
    assert error["code"] == "invalid_rule"
    assert "give exactly one rule" in error["message"]
    assert harness.listener(agent).flushes == 0


@pytest.mark.parametrize("field", ["after_seconds", "every_seconds"])
@pytest.mark.parametrize("seconds", [0, -5, MAX_SAFE_INTEGER + 1, True, 10.0, "10", [10]])
async def test_seconds_must_be_positive_safe_integers(
    harness: Harness, field: str, seconds: Any
) -> None:
    agent = harness.open()
    error = await harness.error(agent, "schedule_create", prompt="x", **{field: seconds})
    assert error["code"] == "invalid_rule"
    assert field in error["message"]
    assert harness.listener(agent).flushes == 0


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"at": 900}, "at"),
        ({"cron": ["0", "9"]}, "cron"),
        ({"after_seconds": 5, "time_zone": 1}, "time_zone"),
        ({"every_seconds": 60, "until": 5}, "until"),
        ({"every_seconds": 60, "count": 0}, "count"),
        ({"every_seconds": 60, "count": True}, "count"),
        ({"every_seconds": 60, "count": 100_001}, "count"),
        ({"every_seconds": 60, "count": MAX_SAFE_INTEGER}, "count"),
        ({"every_seconds": 60, "misfire": "never"}, "misfire"),
    ],
)
async def test_wrong_types_of_rule_arguments_are_invalid_rule(
    harness: Harness, arguments: dict[str, Any], field: str
) -> None:
    agent = harness.open()
    error = await harness.error(agent, "schedule_create", prompt="x", **arguments)
    assert error["code"] == "invalid_rule"
    assert error["message"].startswith(field)
    assert harness.listener(agent).flushes == 0


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


async def test_the_prompt_limit_counts_characters_after_trimming(harness: Harness) -> None:
    agent = harness.open()
    longest = "伸" * MAX_PROMPT_CHARS
    view = await harness.value(agent, "schedule_create", prompt=f"  {longest}  ", after_seconds=10)
    assert view["prompt"] == longest


async def test_unknown_arguments_fail_the_strict_input_model(harness: Harness) -> None:
    agent = harness.open()
    for name, arguments in (
        ("schedule_create", {"prompt": "x", "after_seconds": 1, "when": "now"}),
        ("schedule_update", {"id": "rem-1", "revision": 1, "when": "now"}),
        ("schedule_list", {"verbose": True}),
        ("schedule_delete", {"id": 1}),
        ("schedule_delete", {}),
        ("schedule_update", {"revision": 1, "prompt": "x"}),
    ):
        error = await harness.error(agent, name, **arguments)
        assert error["code"] == "invalid_arguments", (name, error)


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"id": "rem-1", "prompt": "x"}, "revision must be the reminder's current revision"),
        ({"id": "rem-1", "revision": 0, "prompt": "x"}, "revision must be"),
        ({"id": "rem-1", "revision": True, "prompt": "x"}, "revision must be"),
        ({"id": "rem-1", "revision": 1}, "needs at least one field to change"),
        ({"id": "rem-1", "revision": 1, "paused": "yes"}, "paused must be true or false"),
    ],
)
async def test_update_arguments_are_checked_before_any_barrier(
    harness: Harness, arguments: dict[str, Any], problem: str
) -> None:
    agent = harness.open()
    error = await harness.error(agent, "schedule_update", **arguments)
    assert error["code"] == "invalid_arguments"
    assert problem in error["message"]
    assert harness.listener(agent).flushes == 0


async def test_update_shapes_its_fields_like_create(harness: Harness) -> None:
    agent = harness.open()
    for arguments, code in (
        ({"prompt": " "}, "invalid_prompt"),
        ({"every_seconds": 1.5}, "invalid_rule"),
        ({"after_seconds": 5, "cron": "* * * * *"}, "invalid_rule"),
        ({"count": "2"}, "invalid_rule"),
    ):
        error = await harness.error(agent, "schedule_update", id="rem-1", revision=1, **arguments)
        assert error["code"] == code, (arguments, error)
    assert harness.listener(agent).flushes == 0


async def test_list_names_the_zone_and_the_time_now(harness: Harness) -> None:
    agent = harness.open()
    listing = await harness.value(agent, "schedule_list")
    assert listing == {
        "reminders": [],
        "timeZone": "UTC",
        "now": "2026-01-01T00:00:00.000Z",
        "nowLocal": "2026-01-01T00:00:00+00:00",
        "firesWhenClosed": False,
    }


async def test_count_and_until_are_capped_so_no_reminder_runs_forever(harness: Harness) -> None:
    agent = harness.open()
    error = await harness.error(
        agent, "schedule_create", prompt="x", cron="* * * * *", count=2**53 - 1
    )
    assert error == {
        "code": "invalid_rule",
        "message": f"count must be a whole number from 1 to 100000, got {2**53 - 1}",
    }
    far = await harness.error(
        agent, "schedule_create", prompt="x", cron="* * * * *", until="9999-12-31T00:00"
    )
    assert far["code"] == "invalid_rule"
    assert "more than 3653 days (ten years) from now" in far["message"]
    assert "no later than 2036-01-02T00:00:00.000Z" in far["message"]
    view = await harness.value(
        agent,
        "schedule_create",
        prompt="x",
        cron="0 9 * * *",
        count=100_000,
        until="2035-12-31T00:00",
    )
    assert (view["count"], view["until"]) == (100_000, "2035-12-31T00:00:00.000Z")
    moved = await harness.error(
        agent, "schedule_update", id=view["id"], revision=1, until="9999-12-31T00:00"
    )
    assert moved["code"] == "invalid_rule"
