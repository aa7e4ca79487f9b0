"""From validated tool arguments to the record a `create` or `update` writes.

Pure functions of the arguments, the current record (for an update) and the
time `now_ms` the ledger sampled; they raise `ToolError` with
`invalid_rule` (a rule that cannot fire, a bad time or zone, ends on a
one-shot) or `limit_exceeded` (a rule more frequent than
`min_interval_seconds`). What gets resolved:

- `after_seconds`: once at `now + seconds`;
- `at`: once at that time, read in the zone (an explicit offset wins); more
  than `PAST_GRACE_MS` (a minute) in the past is `invalid_rule`;
- `every_seconds`: an elapsed interval, the first occurrence one interval
  from now, or `at` when given — which, as for a one-shot, must not be more
  than `PAST_GRACE_MS` in the past (`invalid_rule`). Only a zone change
  re-reads a stored `at` that has long passed: the series then continues
  with its first occurrence from now on;
- `cron`: the first match after now in the zone; a cron that never matches
  (or not before `until`) is `invalid_rule`;
- `until` (read like `at`) and `count` only on recurring rules; the first
  occurrence must not be after `until`. Both are capped (`invalid_rule`
  beyond): `until` at most `MAX_UNTIL_DAYS` (3,653: ten years) after now,
  `count` at most `MAX_COUNT` (100,000) — a model cannot set up a reminder
  that runs "forever" by asking for `count: 2^53-1` or `until: 9999-12-31`.

An update keeps what it does not mention. Changing the rule or the zone
schedules afresh from now (a zone change re-reads `at` and `cron`, while
`after` and a plain `every` keep their instants); otherwise the record keeps
the occurrence the fold says is owed. `paused: false` on a recurring rule
whose owed occurrence passed moves it to the next occurrence after now:
occurrences are not made up for a pause. A one-shot keeps its target and
fires once, overdue. Changing the rule to a one-shot drops `until` and
`count` unless the update sets them (which is then `invalid_rule`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal
from zoneinfo import ZoneInfo

from dsh import ToolError, validate_time_zone

from .cron import CronError, CronSeries
from .fold import Reminder
from .ids import ReminderId
from .protocol import AfterRule, AtRule, CronRule, EveryRule, Record, RuleModel
from .series import Every
from .timefmt import MAX_TIMESTAMP_MS, format_timestamp
from .words import spell_seconds
from .zones import load_zone, parse_local_time

__all__ = [
    "MAX_COUNT",
    "MAX_UNTIL_DAYS",
    "PAST_GRACE_MS",
    "UNSET",
    "CreateRequest",
    "Misfire",
    "RuleRequest",
    "UpdateRequest",
    "draft_create",
    "draft_snooze",
    "draft_update",
]

PAST_GRACE_MS: Final = 60_000
MAX_COUNT: Final = 100_000
"""The most occurrences `count` may ask for."""
MAX_UNTIL_DAYS: Final = 3_653
"""How far after now `until` may be (ten years)."""
Misfire = Literal["latest", "skip"]


class _Unset:
    """An update argument that was not given (None there means "clear")."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = _Unset()


@dataclass(frozen=True, slots=True)
class RuleRequest:
    """Exactly one rule: `after_seconds`, `at`, `every_seconds` (maybe with `at`) or `cron`."""

    after_seconds: int | None = None
    at: str | None = None
    every_seconds: int | None = None
    cron: str | None = None


@dataclass(frozen=True, slots=True)
class CreateRequest:
    prompt: str
    rule: RuleRequest
    time_zone: str | None = None
    until: str | None = None
    count: int | None = None
    misfire: Misfire | None = None


@dataclass(frozen=True, slots=True)
class UpdateRequest:
    prompt: str | None = None
    rule: RuleRequest | None = None
    time_zone: str | None = None
    until: str | _Unset | None = UNSET
    count: int | _Unset | None = UNSET
    misfire: Misfire | None = None
    paused: bool | None = None


@dataclass(frozen=True, slots=True)
class _Timing:
    rule: RuleModel
    first_ms: int
    next_ms: int


def _present(**fields: object) -> dict[str, object]:
    """`fields` without the unset (None) ones: optional keys are absent, never null."""
    return {name: value for name, value in fields.items() if value is not None}


def _record(**fields: object) -> Record:
    return Record.model_validate(_present(**fields))


def _zone(name: str) -> ZoneInfo:
    try:
        return load_zone(validate_time_zone(name))
    except ValueError as error:
        raise ToolError("invalid_rule", f"time_zone: {error}") from None


def _time(name: str, text: str, zone: ZoneInfo) -> int:
    try:
        return parse_local_time(text, zone)
    except ValueError as error:
        raise ToolError("invalid_rule", f"{name}: {error}") from None


def _spelt(epoch_ms: int) -> str:
    return format_timestamp(epoch_ms)


def _timing(
    request: RuleRequest, zone: ZoneInfo, now_ms: int, min_interval: int, *, reread: bool = False
) -> _Timing:
    """The rule, first and next occurrence of `request` at `now_ms`.

    `reread` is a stored rule read again in a new zone: its `every` anchor may have passed.
    """
    if request.after_seconds is not None:
        due = now_ms + request.after_seconds * 1000
        if due > MAX_TIMESTAMP_MS:
            raise ToolError(
                "invalid_rule",
                f"after_seconds={request.after_seconds} puts the reminder past "
                f"{_spelt(MAX_TIMESTAMP_MS)}, the latest time a reminder can have",
            )
        return _Timing(AfterRule(kind="after", seconds=request.after_seconds), due, due)
    if request.every_seconds is not None:
        return _every(request.every_seconds, request.at, zone, now_ms, min_interval, reread)
    if request.cron is not None:
        return _cron(request.cron, zone, now_ms, min_interval)
    assert request.at is not None, "unreachable: the tools pass exactly one rule"
    at = _time("at", request.at, zone)
    if at < now_ms - PAST_GRACE_MS:
        raise ToolError(
            "invalid_rule",
            f"at={request.at!r} is {_spelt(at)}, which has passed (it is {_spelt(now_ms)} now); "
            "give a time from now on",
        )
    return _Timing(AtRule(kind="at", at=request.at), at, at)


def _every(
    seconds: int, at: str | None, zone: ZoneInfo, now_ms: int, min_interval: int, reread: bool
) -> _Timing:
    if seconds < min_interval:
        raise ToolError(
            "limit_exceeded",
            f"every_seconds={seconds} is more often than this host allows: at least "
            f"{min_interval} seconds ({spell_seconds(min_interval)}) between occurrences",
        )
    period = seconds * 1000
    anchor = now_ms + period if at is None else _time("at", at, zone)
    if anchor > MAX_TIMESTAMP_MS:
        raise ToolError("invalid_rule", f"every_seconds={seconds} never fires before year 10000")
    upcoming = anchor
    if anchor < now_ms - PAST_GRACE_MS:
        if not reread:
            raise ToolError(
                "invalid_rule",
                f"at={at!r} is {_spelt(anchor)}, which has passed (it is {_spelt(now_ms)} now); "
                "with every_seconds, at is the first occurrence: give one from now on",
            )
        upcoming = Every(anchor, period).next_after(now_ms - 1) or anchor
    rule = EveryRule.model_validate(_present(kind="every", seconds=seconds, at=at))
    return _Timing(rule, anchor, upcoming)


def _cron(text: str, zone: ZoneInfo, now_ms: int, min_interval: int) -> _Timing:
    try:
        series = CronSeries(text, zone)
    except CronError as error:
        raise ToolError("invalid_rule", f"cron: {error}") from None
    spacing = series.min_spacing_seconds()
    if spacing < min_interval:
        raise ToolError(
            "limit_exceeded",
            f"cron={text!r} fires {spell_seconds(spacing)} apart; this host allows at least "
            f"{min_interval} seconds ({spell_seconds(min_interval)}) between occurrences",
        )
    first = series.next_after(now_ms)
    if first is None:
        raise ToolError("invalid_rule", f"cron={text!r} never matches a date from now on")
    return _Timing(CronRule(kind="cron", cron=series.expression), first, first)


def _until(text: str, zone: ZoneInfo, first_due: int, now_ms: int) -> str:
    until = _time("until", text, zone)
    if until > now_ms + MAX_UNTIL_DAYS * 86_400_000:
        raise ToolError(
            "invalid_rule",
            f"until={text!r} is more than {MAX_UNTIL_DAYS} days (ten years) from now; give "
            f"an until no later than {_spelt(now_ms + MAX_UNTIL_DAYS * 86_400_000)}, or a count",
        )
    if until < first_due:
        raise ToolError(
            "invalid_rule",
            f"until={text!r} is {_spelt(until)}, before the first occurrence "
            f"{_spelt(first_due)}: the reminder would never fire",
        )
    return _spelt(until)


def _ends_on_one_shot(rule: RuleModel, until: object, count: object) -> None:
    if isinstance(rule, AfterRule | AtRule) and (until is not None or count is not None):
        raise ToolError(
            "invalid_rule",
            "until and count end a recurring reminder (every_seconds or cron); "
            "a one-shot fires once",
        )


def draft_create(
    request: CreateRequest,
    *,
    reminder_id: ReminderId,
    now_ms: int,
    default_zone: str,
    min_interval: int,
) -> Record:
    """The record a `create` of `request` writes as `reminder_id` at `now_ms`."""
    zone_name = request.time_zone or default_zone
    zone = _zone(zone_name)
    timing = _timing(request.rule, zone, now_ms, min_interval)
    _ends_on_one_shot(timing.rule, request.until, request.count)
    until = None if request.until is None else _until(request.until, zone, timing.next_ms, now_ms)
    return _record(
        id=reminder_id,
        prompt=request.prompt,
        rule=timing.rule,
        timeZone=zone_name,
        firstAt=_spelt(timing.first_ms),
        nextAt=_spelt(timing.next_ms),
        until=until,
        count=request.count,
        misfire=request.misfire or "latest",
        paused=False,
        revision=1,
    )


def _rule_request(rule: RuleModel) -> RuleRequest | None:
    """The request that re-reads `rule` in another zone, or None when zones do not matter."""
    if isinstance(rule, AtRule):
        return RuleRequest(at=rule.at)
    if isinstance(rule, CronRule):
        return RuleRequest(cron=rule.cron)
    if isinstance(rule, EveryRule) and rule.at is not None:
        return RuleRequest(every_seconds=rule.seconds, at=rule.at)
    return None


def draft_update(
    reminder: Reminder, request: UpdateRequest, *, now_ms: int, min_interval: int
) -> Record:
    """The record an `update` of `reminder` with `request` writes at `now_ms`."""
    current = reminder.record
    zone_name = request.time_zone or current.time_zone
    zone = _zone(zone_name)
    rule_request = request.rule
    reread = rule_request is None
    if rule_request is None and zone_name != current.time_zone:
        rule_request = _rule_request(current.rule)
    if rule_request is not None:
        timing = _timing(rule_request, zone, now_ms, min_interval, reread=reread)
    else:
        timing = _Timing(current.rule, current.first_ms, reminder.next_ms)
    paused = current.paused if request.paused is None else request.paused
    next_ms = timing.next_ms
    recurring = isinstance(timing.rule, EveryRule | CronRule)
    if current.paused and not paused and recurring and next_ms <= now_ms:
        next_ms = reminder.series.next_after(now_ms) or next_ms
    until_arg, count_arg = request.until, request.count
    _ends_on_one_shot(
        timing.rule,
        None if isinstance(until_arg, _Unset) else until_arg,
        None if isinstance(count_arg, _Unset) else count_arg,
    )
    if isinstance(until_arg, _Unset):
        until = current.until if recurring else None
        if until is not None and current.until_ms is not None and next_ms > current.until_ms:
            raise ToolError(
                "invalid_rule",
                f"the next occurrence {_spelt(next_ms)} is after until={until}: give a later "
                "until, or until: null to remove it",
            )
    else:
        until = None if until_arg is None else _until(until_arg, zone, next_ms, now_ms)
    count = (current.count if recurring else None) if isinstance(count_arg, _Unset) else count_arg
    if count is not None and count <= reminder.delivered:
        raise ToolError(
            "invalid_rule",
            f"count={count} is not more than the {reminder.delivered} occurrences "
            "already delivered; give a larger count, or delete the reminder",
        )
    return _record(
        id=current.id,
        prompt=request.prompt or current.prompt,
        rule=timing.rule,
        timeZone=zone_name,
        firstAt=_spelt(timing.first_ms),
        nextAt=_spelt(next_ms),
        until=until,
        count=count,
        misfire=request.misfire or current.misfire,
        paused=paused,
        revision=current.revision + 1,
    )


def draft_snooze(reminder: Reminder, seconds: int, *, now_ms: int, shown_ms: int | None) -> Record:
    """`reminder` with its next occurrence postponed by `seconds`.

    `shown_ms` is the occurrence its view shows next (`plan(...).next_ms`);
    it moves by `seconds`, or, when it is already due, to `seconds` from now
    (an overdue reminder snoozed for ten minutes comes back in ten minutes).
    A one-shot then fires at the new time; a recurring rule delivers that
    occurrence and continues with its own occurrences after it (any in
    between are not delivered). Raises `ToolError`: `schedule_paused` for a
    paused reminder (resume it instead), `invalid_rule` for a time past the
    reminder's `until` or the year 9999. The `snooze` action uses it.
    """
    current = reminder.record
    if current.paused:
        raise ToolError(
            "schedule_paused", f"{current.id} is paused: resume it rather than snooze it"
        )
    assert shown_ms is not None, "unreachable: an unpaused, unexpired reminder shows its next"
    due = max(shown_ms, now_ms) + seconds * 1000
    if due > MAX_TIMESTAMP_MS:
        raise ToolError("invalid_rule", f"snoozing {seconds} seconds passes the year 9999")
    if current.until_ms is not None and due > current.until_ms:
        raise ToolError(
            "invalid_rule",
            f"snoozing {current.id} by {spell_seconds(seconds)} moves it to {_spelt(due)}, "
            f"after its until {current.until}: it would never fire",
        )
    return current.model_copy(update={"next_at": _spelt(due), "revision": current.revision + 1})
