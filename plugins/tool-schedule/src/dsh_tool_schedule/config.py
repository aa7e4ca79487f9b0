"""The plugin's optional configuration (an overlay table validated by `ScheduleConfig`)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ScheduleConfig"]


class ScheduleConfig(BaseModel):
    """How the owner waits and what the tools allow. The defaults are the product's.

    Waiting (tests may shorten it):

    - `max_segment_seconds`: the longest single sleep (at most 60 s), so every
      wake re-reads the wall clock at least that often;
    - `early_wake_seconds`: how far before a target the last long sleep ends,
      so that timer slack on a long sleep (about 0.1%, DESIGN §13) is absorbed
      and a short final sleep lands on time.

    Limits that protect people's money and the host (beyond one, a tool
    answers `limit_exceeded`):

    - `max_active`: active reminders per Session (paused ones count);
    - `max_per_turn`: creates per turn (the run from a `message/user` to its
      `turn/end`);
    - `min_interval_seconds`: the shortest `every_seconds`, and the shortest
      spacing a `cron` rule may have (lanes and tests lower it).

    Misfires: `misfire_grace_seconds` is how late an occurrence of a
    `misfire: "skip"` reminder may still be delivered (a busy agent, a wake
    from cold); older ones are skipped.

    Delivery budgets (`budget`): every delivery starts a paid model turn.

    - `max_deliveries_per_hour`, `max_deliveries_per_day`: turns started by
      reminders in one Session in any rolling hour / day (a coalesced
      delivery is one turn). Beyond, due reminders are deferred — active,
      never early, delivered when the window has room — and the person is
      told once (`schedule/notice` `deliveries_deferred`);
    - `host_deliveries_per_minute`: turns started by reminders across every
      Session of the host in any rolling minute; beyond, deliveries wait,
      first come first served. Set it to what the model provider allows.
    """

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    max_segment_seconds: float = Field(default=60.0, gt=0, le=60)
    early_wake_seconds: float = Field(default=0.25, ge=0, le=5)
    max_active: int = Field(default=100, ge=1, le=10_000)
    max_per_turn: int = Field(default=20, ge=1, le=1_000)
    min_interval_seconds: int = Field(default=60, ge=1, le=86_400)
    misfire_grace_seconds: int = Field(default=300, ge=0, le=86_400)
    max_deliveries_per_hour: int = Field(default=60, ge=1, le=100_000)
    max_deliveries_per_day: int = Field(default=480, ge=1, le=1_000_000)
    host_deliveries_per_minute: int = Field(default=12_000, ge=1, le=1_000_000)
