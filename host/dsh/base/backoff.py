"""`Backoff`: how long to wait before the next try of something that keeps failing.

The one rule for every retry loop in dsh (the write path, the wake index,
PostgreSQL's LISTEN connections, a model provider's 429s and 5xx): the wait
before retry `n` (0-based) is `first × factor^n`, never more than `cap`.
With `jitter`, it is a uniformly random fraction of that ("full jitter"), so
that many clients that failed together do not all come back together.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

__all__ = ["Backoff"]


@dataclass(frozen=True, slots=True)
class Backoff:
    """The waits of one retry loop, in seconds (see the module docstring)."""

    first: float
    cap: float
    factor: float = 2.0
    jitter: bool = False

    def __post_init__(self) -> None:
        if not 0 < self.first <= self.cap or self.factor < 1:
            raise ValueError(
                f"a backoff needs 0 < first <= cap and factor >= 1, not first={self.first}, "
                f"cap={self.cap}, factor={self.factor}"
            )

    def delay(self, attempt: int, rng: random.Random | None = None) -> float:
        """The wait before retry `attempt` (0-based); `rng` draws the jitter (default:
        the `random` module's)."""
        bound = min(self.cap, self.first * self.factor ** min(max(attempt, 0), 64))
        if not self.jitter:
            return bound
        return (rng.random() if rng is not None else random.random()) * bound
