"""How big each case runs: `full` (the figures in the README), `quick` (< 2 minutes on
two cores; same code paths, smaller N and fewer rounds) and `smoke` (seconds; for the
test that checks the suite runs and reports well-formed JSON, not its numbers)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PROFILES", "Size"]


@dataclass(frozen=True, slots=True)
class Size:
    name: str
    # 1. idle punctuality: reminders, first target after `idle_lead` s, then one per `idle_gap` s
    idle_reminders: int
    idle_lead: float
    idle_gap: float
    # 2. burst: Sessions holding a reminder due at the same instant
    burst: tuple[int, ...]
    # 3. spread: Sessions with reminders spread evenly over `spread_window` s
    spread: int
    spread_window: float
    # how long past the window to wait for the peer before counting its late jobs as censored
    peer_patience: float
    # 3b. spread-recurring: Sessions, each with a reminder every `recurring_every` s, first
    #     occurrences spread over one interval, delivered for `recurring_window` s
    recurring: int
    recurring_every: int
    recurring_window: float
    # 3c. fold: schedule/change events per synthetic log (v1 and v2)
    fold_events: int
    # 4. durability: rounds, events per round at batch 1 and at batch 100
    durability_rounds: int
    durability_events: tuple[int, int]
    # 5. resume: Session lengths, rounds
    resume_lengths: tuple[int, ...]
    resume_rounds: int
    # 6. history: Session lengths (small, large), requests per figure
    history_lengths: tuple[int, ...]
    history_requests: int
    # 7. fan-out: subscriber counts, appends per count
    fanout_subscribers: tuple[int, ...]
    fanout_appends: int
    # 8. footprint: armed Sessions for memory; for idle CPU, Sessions and seconds
    footprint_sessions: int
    idle_cpu_sessions: int
    idle_cpu_seconds: float
    # 9. cold start: rounds
    coldstart_rounds: int
    # 2. burst: how many bursts of each size (one burst is one sample of a noisy disk)
    burst_rounds: int = 1
    # 10. wake: cold Sessions with one reminder each, spread over `wake_window` s after a
    #     restart; start-up rounds; hibernate: Sessions served, with and without hibernation
    wake_sessions: int = 10_000
    wake_window: float = 60.0
    wake_rounds: int = 3
    hibernate_sessions: int = 5_000
    # 10b. storm: Sessions (cold after a restart, and hot) each holding one reminder, all
    #      due at the same instant; the peer fires as many jobs at one instant
    storm: int = 10_000
    # 10c. storm-pg: the same storm with the store on PostgreSQL (one host, then two);
    #      seconds allowed for the host processes to start before the storm's margin
    storm_pg: int = 10_000
    storm_pg_start: float = 8.0
    # 12. alerts: flushes carrying an alert (spread over `alert_sessions` live Sessions);
    #     Sessions with unread alerts in the attention file a start-up opens
    alert_rounds: int = 1_000
    alert_sessions: int = 50
    attention_sessions: int = 10_000
    # 17. notify: alerts spread over a window, each sent to a local json:// webhook
    notify_alerts: int = 1_000
    notify_window: float = 10.0
    # 3d. catch-up: `* * * * *` reminders in one Session, owed since `catchup_days` ago
    catchup_reminders: int = 40
    catchup_days: float = 80.0
    # 16. search: Sessions × messages indexed, and timed searches per query
    search_sessions: int = 10_000
    search_messages: int = 100
    search_rounds: int = 30


PROFILES: dict[str, Size] = {
    "full": Size(
        name="full",
        idle_reminders=100,
        idle_lead=2.0,
        idle_gap=0.15,
        burst=(100, 1_000),
        burst_rounds=3,
        spread=10_000,
        spread_window=20.0,
        peer_patience=120.0,
        recurring=1_000,
        recurring_every=10,
        recurring_window=60.0,
        fold_events=20_000,
        durability_rounds=7,
        durability_events=(500, 20_000),
        resume_lengths=(10_000, 100_000),
        resume_rounds=5,
        history_lengths=(1_000, 100_000),
        history_requests=30,
        fanout_subscribers=(1, 10, 100),
        fanout_appends=200,
        footprint_sessions=10_000,
        idle_cpu_sessions=1_000,
        idle_cpu_seconds=10.0,
        coldstart_rounds=10,
        wake_sessions=10_000,
        wake_window=60.0,
        wake_rounds=3,
        hibernate_sessions=5_000,
        alert_rounds=1_000,
        attention_sessions=10_000,
        catchup_reminders=40,
        catchup_days=80.0,
    ),
    "quick": Size(
        name="quick",
        idle_reminders=50,
        idle_lead=1.0,
        idle_gap=0.08,
        burst=(100,),
        burst_rounds=2,
        spread=1_000,
        spread_window=5.0,
        peer_patience=5.0,
        recurring=300,
        recurring_every=5,
        recurring_window=15.0,
        fold_events=5_000,
        durability_rounds=3,
        durability_events=(300, 10_000),
        resume_lengths=(10_000, 100_000),
        resume_rounds=2,
        history_lengths=(1_000, 100_000),
        history_requests=5,
        fanout_subscribers=(1, 10, 100),
        fanout_appends=60,
        footprint_sessions=1_000,
        idle_cpu_sessions=1_000,
        idle_cpu_seconds=3.0,
        coldstart_rounds=4,
        wake_sessions=1_000,
        wake_window=10.0,
        wake_rounds=2,
        hibernate_sessions=500,
        storm=2_000,
        storm_pg=2_000,
        alert_rounds=300,
        notify_alerts=200,
        notify_window=3.0,
        attention_sessions=2_000,
        catchup_reminders=10,
        catchup_days=80.0,
        search_sessions=1_000,
        search_messages=100,
        search_rounds=20,
    ),
    "smoke": Size(
        name="smoke",
        idle_reminders=5,
        idle_lead=0.5,
        idle_gap=0.05,
        burst=(20,),
        spread=50,
        spread_window=0.5,
        peer_patience=2.0,
        recurring=20,
        recurring_every=1,
        recurring_window=3.0,
        fold_events=300,
        durability_rounds=1,
        durability_events=(50, 1_000),
        resume_lengths=(500,),
        resume_rounds=1,
        history_lengths=(200, 2_000),
        history_requests=5,
        fanout_subscribers=(1, 3),
        fanout_appends=5,
        footprint_sessions=50,
        idle_cpu_sessions=50,
        idle_cpu_seconds=0.5,
        coldstart_rounds=1,
        wake_sessions=40,
        wake_window=1.0,
        wake_rounds=1,
        hibernate_sessions=20,
        storm=40,
        storm_pg=40,
        storm_pg_start=4.0,
        alert_rounds=20,
        alert_sessions=5,
        notify_alerts=20,
        notify_window=1.0,
        attention_sessions=50,
        catchup_reminders=3,
        catchup_days=2.0,
        search_sessions=20,
        search_messages=10,
        search_rounds=3,
    ),
}
