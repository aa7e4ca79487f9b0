"""The plugin's optional configuration (an overlay table validated by `ScheduleConfig`)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ScheduleConfig"]


class ScheduleConfig(BaseModel):
    """How the owner waits. The defaults are the product's; tests may shorten them.

    - `max_segment_seconds`: the longest single sleep (at most 60 s), so every
      wake re-reads the wall clock at least that often;
    - `early_wake_seconds`: how far before a target the last long sleep ends,
      so that timer slack on a long sleep (about 0.1%, DESIGN §13) is absorbed
      and a short final sleep lands on time.
    """

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    max_segment_seconds: float = Field(default=60.0, gt=0, le=60)
    early_wake_seconds: float = Field(default=0.25, ge=0, le=5)
