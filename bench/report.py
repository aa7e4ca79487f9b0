"""The results table: one row per figure, beside its limit or peer and its target.

Rows are plain dicts (they go into the JSON too); `render` prints them as a
Markdown table under a header naming the date, profile and machine, so the
output can be pasted into `bench/README.md` as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["render", "table_rows"]

Row = dict[str, str]


def _num(value: Any, unit: str = "", digits: int = 1) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool) or not isinstance(value, float | int):
        return f"{value}{unit}"
    if isinstance(value, int) or abs(value) >= 1000:
        return f"{value:,.0f}{unit}"
    return f"{value:.{digits}f}{unit}"


def _mp(stats: dict[str, Any] | None, unit: str = " ms", digits: int = 1) -> str:
    """`median / p99` of a summary."""
    if not stats or not stats.get("n"):
        return "–"
    return f"{_num(stats['median'], '', digits)} / {_num(stats['p99'], '', digits)}{unit}"


def _range(stats: dict[str, Any] | None, unit: str = "", digits: int = 1) -> str:
    """`median (min–max)` of a summary."""
    if not stats or not stats.get("n"):
        return "–"
    return (
        f"{_num(stats['median'], '', digits)} ({_num(stats['min'], '', digits)}–"
        f"{_num(stats['max'], '', digits)}){unit}"
    )


def _ratio(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}×"


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def _verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else "ok" if ok else "MISS"


def _div(a: Any, b: Any) -> float | None:
    try:
        return float(a) / float(b) if a is not None and b else None
    except (TypeError, ValueError):
        return None


def _late_start(r: dict[str, Any]) -> str:
    """A warning when the setup ran past the first target (early figures then include it)."""
    return "" if r.get("armed_before_first_target", True) else " (setup overran the first target)"


def _row(
    case: str, figure: str, measured: str, limit: str, ratio: str, target: str, ok: bool | None
) -> Row:
    return {
        "case": case,
        "figure": figure,
        "measured": measured,
        "limit": limit,
        "ratio": ratio,
        "target": target,
        "verdict": _verdict(ok),
    }


def _idle(name: str, r: dict[str, Any], cases: dict[str, Any]) -> list[Row]:
    limit = r.get("limit_sleep_ms")
    rows = []
    for key, figure in (("durable_ms", "dispatch durable"), ("followup_ms", "follow-up message")):
        p99 = (r.get(key) or {}).get("p99")
        rows.append(
            _row(
                f"1 idle ({r.get('sessions')} reminders)",
                f"lateness, {figure} (median / p99)",
                _mp(r.get(key), digits=2) + _late_start(r),
                f"anyio.sleep: {_mp(limit, digits=2)}",
                _ratio(_div(p99, (limit or {}).get("p99"))),
                "p99 ≤ 10 ms",
                None if p99 is None else p99 <= 10,
            )
        )
    return rows


def _burst(name: str, r: dict[str, Any], cases: dict[str, Any]) -> list[Row]:
    ratio = r.get("ratio_to_bound")
    fsync = (r.get("fsync_ms") or {}).get("median")
    median = (r.get("durable_ms") or {}).get("median")
    return [
        _row(
            f"2 burst ({r.get('sessions')} at once)",
            "until the last dispatch is durable",
            f"{_num(r.get('last_durable_ms'), ' ms')} (median {_num(median, ' ms')})"
            + _late_start(r)
            + _burst_rounds(r),
            f"N × fsync = {_num(r.get('fsync_bound_ms'), ' ms')} ({_num(fsync, ' ms', 3)} each)",
            _ratio(ratio),
            "≤ 2× the fsync bound",
            None if ratio is None else ratio <= 2,
        )
    ]


def _burst_rounds(r: dict[str, Any]) -> str:
    """Every round's ratio when there were several (the row shows the median round)."""
    rounds = r.get("rounds") or []
    if len(rounds) < 2:
        return ""
    ratios = (_ratio(item.get("ratio_to_bound")) for item in rounds)
    return "; ratios of the rounds " + ", ".join(ratios)


def _peer_text(peer: dict[str, Any], label: str) -> str:
    stats = peer.get("start_ms")
    if not stats:
        return ""
    censored = peer.get("censored")
    return f"{label}: {_mp(stats)}" + (f" ({censored} censored: ≥)" if censored else "")


def _spread(name: str, r: dict[str, Any], cases: dict[str, Any]) -> list[Row]:
    peer = cases.get("spread-peer") or {}
    memory = cases.get("spread-peer-memory") or {}
    p99 = (r.get("durable_ms") or {}).get("p99")
    peer_p99 = ((peer.get("start_ms") or {}).get("p99")) or None
    texts = [
        _peer_text(peer, "APScheduler 4 + SQLite"),
        _peer_text(memory, "APScheduler 4 in memory"),
    ]
    peer_text = "; ".join(text for text in texts if text) or "–"
    ok = None if p99 is None else p99 <= 50 and (peer_p99 is None or p99 <= peer_p99)
    rows = [
        _row(
            f"3 spread ({r.get('sessions')} over {r.get('window_s')} s)",
            "lateness, dispatch durable (median / p99)",
            _mp(r.get("durable_ms")) + _late_start(r),
            peer_text,
            _ratio(_div(p99, peer_p99)),
            "p99 ≤ 50 ms and ≤ peer",
            ok,
        )
    ]
    rows.append(
        _row(
            rows[0]["case"],
            "lateness, follow-up message (median / p99)",
            _mp(r.get("followup_ms")),
            "",
            "",
            "",
            None,
        )
    )
    gc_due = r.get("gc_while_due")
    if gc_due:
        longest = gc_due.get("max_ms")
        rows.append(
            _row(
                rows[0]["case"],
                "longest GC pause while reminders fall due",
                f"{_num(longest, ' ms', 2)} ({gc_due.get('collections')} collections, "
                f"{gc_due.get('full_collections')} full; longest CPU "
                f"{_num(gc_due.get('max_cpu_ms'), ' ms', 2)})",
                "",
                "",
                "≤ 20 ms",
                None if longest is None else longest <= 20,
            )
        )
    return rows


def _recurring(name: str, r: dict[str, Any], cases: dict[str, Any]) -> list[Row]:
    p99 = (r.get("durable_ms") or {}).get("p99")
    counted = r.get("occurrences") or {}
    once = r.get("all_exactly_once")
    case = (
        f"3b spread-recurring ({r.get('sessions')} × every {r.get('every_s')} s "
        f"over {r.get('window_s')} s)"
    )
    return [
        _row(
            case,
            "lateness, dispatch durable (median / p99)",
            _mp(r.get("durable_ms")) + _late_start(r),
            "",
            "",
            "p99 ≤ 50 ms",
            None if p99 is None else p99 <= 50,
        ),
        _row(
            case,
            "lateness, follow-up message (median / p99)",
            _mp(r.get("followup_ms")),
            "",
            "",
            "",
            None,
        ),
        _row(
            case,
            "occurrences delivered exactly once",
            f"{_num(counted.get('exactly_once'))} of {_num(counted.get('expected'))} "
            f"(missing {_num(counted.get('missing'))}, "
            f"duplicated {_num(counted.get('duplicated'))}, "
            f"unexpected {_num(counted.get('unexpected'))})",
            "",
            "",
            "all, once",
            None if once is None else bool(once),
        ),
    ]


def _catchup(name: str, r: dict[str, Any], cases: dict[str, Any]) -> list[Row]:
    during = r.get("health_during_ms") or {}
    p99 = during.get("p99")
    case = (
        f"3d catchup ({r.get('reminders')} × `* * * * *` in {r.get('zone')}, "
        f"down {_num(r.get('days_down'))} days)"
    )
    took = (
        f"dispatched {_num(r.get('catchup_dispatched_s'), ' s', 2)}, "
        f"answered {_num(r.get('catchup_answered_s'), ' s', 2)}; "
        f"missed stored {r.get('missed_stored')}"
    )
    return [
        _row(
            case,
            "GET /api/health during the catch-up (median / p99; max)",
            _mp(during) + f"; {_num(during.get('max'), ' ms')}",
            f"idle host: {_mp(r.get('health_idle_ms'))}",
            "",
            "p99 ≤ 50 ms",
            None if p99 is None else p99 <= 50,
        ),
        _row(
            case,
            "catch-up time (resume asked → last dispatch / last turn)",
            took,
            "",
            "",
            "",
            None if r.get("completed") is None else bool(r.get("completed")),
        ),
    ]


_FOLD_LOGS = (
    ("v1", "v1 (after)"),
    ("v2_once", "v2 once"),
    ("v2_every", "v2 every"),
    ("v2_cron", "v2 cron (Europe/Berlin)"),
    ("v2_mixed", "v2 mixed"),
)


def _fold(name: str, r: dict[str, Any], cases: dict[str, Any]) -> list[Row]:
    rows = []
    for key, label in _FOLD_LOGS:
        log = r.get(key) or {}
        fold = (log.get("fold_us_per_event") or {}).get("median")
        parse = (log.get("json_loads_us_per_event") or {}).get("median")
        rows.append(
            _row(
                f"3c fold ({_num(r.get('events'))} events)",
                f"ScheduleFold.of, {label} (µs per schedule/change event)",
                _range(log.get("fold_us_per_event"), digits=2),
                f"json.loads: {_num(parse, ' µs', 2)}",
                _ratio(_div(fold, parse)),
                "",
                None,
            )
        )
    return rows


def _throughput_rows(
    r: dict[str, Any], case: str, raw: str, floors: tuple[tuple[int, float], ...]
) -> list[Row]:
    """One row per batch size: dsh's append + flush rate against the raw loop's."""
    rows = []
    for batch, floor in floors:
        b = r.get(f"batch_{batch}") or {}
        ratio = b.get("ratio_to_raw")
        rows.append(
            _row(
                case,
                f"append + flush, batch {batch} (events/s)",
                _range(b.get("dsh_events_per_s"), digits=0),
                f"{raw}: {_range(b.get('raw_events_per_s'), digits=0)}",
                _percent(ratio),
                f"≥ {floor:.0%} of raw",
                None if ratio is None else ratio >= floor,
            )
        )
    return rows


def _durability(name: str, r: dict[str, Any], cases: dict[str, Any]) -> list[Row]:
    case = "4 durability (one Session)"
    rows = _throughput_rows(r, case, "raw write+fdatasync", ((1, 0.5), (100, 0.8)))
    for batch in (1, 100):
        b = r.get(f"batch_{batch}") or {}
        if "ceiling_events_per_s" not in b:
            continue  # a run saved before the ceiling was measured
        rows.append(
            _row(
                case,
                f"ceiling: each event checked, then written off the loop, batch {batch} (events/s)",
                f"{_range(b.get('ceiling_events_per_s'), digits=0)}; dsh reaches "
                f"{_percent(b.get('ratio_to_ceiling'))} of it",
                f"raw write+fdatasync in a worker thread: "
                f"{_range(b.get('off_loop_events_per_s'), digits=0)}; events checked: "
                f"{_range(b.get('checked_events_per_s'), digits=0)}",
                _percent(b.get("ceiling_ratio_to_raw")),
                "reported (the best ratio to raw a store keeping dsh's rules can reach)",
                None,
            )
        )
    return rows


def _resume(name: str, r: dict[str, Any], cases: dict[str, Any]) -> list[Row]:
    rows = []
    for key in sorted((k for k in r if k.startswith("events_")), key=lambda k: int(k[7:])):
        item = r[key]
        ratio = item.get("ratio_to_raw")
        rows.append(
            _row(
                f"5 resume ({int(key[7:]):,} events, {item.get('file_mib')} MiB)",
                "Host.resume to armed (ms)",
                _range(item.get("resume_ms")),
                f"json.loads per line: {_range(item.get('raw_json_loads_ms'))}",
                _ratio(ratio),
                "≤ 2× raw parse",
                None if ratio is None else ratio <= 2,
            )
        )
        if "first_read_ms" in item:
            rows.append(
                _row(
                    f"5 resume ({int(key[7:]):,} events), first read",
                    "Host.resume of a log never proven (fresh host, no sidecar)",
                    _range(item.get("first_read_ms")),
                    f"json.loads per line: {_range(item.get('raw_json_loads_ms'))}",
                    _ratio(item.get("first_read_ratio")),
                    "reported",
                    None,
                )
            )
    return rows


_HISTORY_FIGURES = (
    ("list", "GET /api/sessions", ""),
    ("hello", "WebSocket hello, cold Session", ""),
    ("cold", "GET events?before=…&limit=100, cold Session", " and ≤ 10 ms"),
    ("live", "same page, live Session", ""),
    ("live_hello", "WebSocket hello, live Session", ""),
)


def _history(name: str, r: dict[str, Any], cases: dict[str, Any]) -> list[Row]:
    lengths = sorted(int(key[7:]) for key in r if key.startswith("events_"))
    if not lengths:
        return []
    small = r[f"events_{lengths[0]}"]
    rows = []
    for key, figure, extra in _HISTORY_FIGURES:
        base = ((small.get(key) or {}).get("ms") or {}).get("median")
        for length in lengths:
            item = r[f"events_{length}"]
            stats = (item.get(key) or {}).get("ms")
            median = (stats or {}).get("median")
            first = (item.get(key) or {}).get("first_ms")
            judged = length != lengths[0] and key in ("list", "hello", "cold")
            ratio = _div(median, base) if length != lengths[0] else None
            ok: bool | None = None
            if judged and ratio is not None and median is not None:
                ok = ratio <= 3 and (not extra or median <= 10)
            rows.append(
                _row(
                    f"6 history ({length:,} events × {r.get('sessions')} Sessions, "
                    f"{item.get('file_mib')} MiB each)",
                    f"{figure} (median / p99; first)",
                    f"{_mp(stats, digits=2)}; {_num(first, ' ms')}",
                    f"at {lengths[0]:,} events: {_num(base, ' ms', 2)}" if ratio else "",
                    _ratio(ratio) if ratio else "",
                    f"≤ 3× the small log{extra}" if judged else "",
                    ok,
                )
            )
    return rows


def _fanout(name: str, r: dict[str, Any], cases: dict[str, Any]) -> list[Row]:
    rows = []
    for key in sorted((k for k in r if k.startswith("subscribers_")), key=lambda k: int(k[12:])):
        count = int(key[12:])
        item = r[key]
        last = item.get("last_subscriber_ms")
        limit = item.get("raw_broadcast_last_ms")
        p99 = (last or {}).get("p99")
        rows.append(
            _row(
                f"7 fan-out ({count} subscriber{'s' if count > 1 else ''})",
                "append → frame at the last subscriber (median / p99)",
                _mp(last, digits=2),
                f"raw websockets broadcast: {_mp(limit, digits=2)}" if limit else "–",
                _ratio(_div(p99, (limit or {}).get("p99"))),
                "p99 ≤ 10 ms" if count >= 100 else "",
                (None if p99 is None else p99 <= 10) if count >= 100 else None,
            )
        )
    return rows


def _memory(name: str, r: dict[str, Any], cases: dict[str, Any]) -> list[Row]:
    kib = r.get("kib_per_session")
    return [
        _row(
            f"8 footprint ({_num(r.get('sessions'), '')} armed Sessions)",
            "RSS growth per armed Session",
            _num(kib, " KiB"),
            "",
            "",
            "≤ 12 KiB",
            None if kib is None else kib <= 12,
        )
    ]


def _idle_cpu(name: str, r: dict[str, Any], cases: dict[str, Any]) -> list[Row]:
    cpu = r.get("cpu_percent")
    return [
        _row(
            f"8 footprint ({_num(r.get('sessions'), '')} armed Sessions)",
            f"CPU of the idle host over {r.get('idle_seconds')} s",
            _num(cpu, " %", 3),
            "",
            "",
            "≤ 1 %",
            None if cpu is None else cpu <= 1,
        )
    ]


def _coldstart(name: str, r: dict[str, Any], cases: dict[str, Any]) -> list[Row]:
    stats = r.get("to_first_200_ms")
    median = (stats or {}).get("median")
    return [
        _row(
            "9 cold start",
            "dsh web --overlay overlays/web-schedule → first 200 (ms)",
            _range(stats, digits=0),
            "",
            "",
            "≤ 1,500 ms",
            None if median is None else median <= 1500,
        )
    ]


def _pg(name: str, r: dict[str, Any], cases: dict[str, Any]) -> list[Row]:
    rows = _throughput_rows(
        r, "pg durability (one Session, fenced)", "raw INSERT + COMMIT", ((1, 0.5), (100, 0.5))
    )
    reads = r.get("reads") or {}
    lengths = sorted(reads, key=int)
    for length in lengths:
        item = reads[length]
        small = reads[lengths[0]]
        page_ratio = _div(
            (item.get("cold_page_ms") or {}).get("median"),
            (small.get("cold_page_ms") or {}).get("median"),
        )
        rows.append(
            _row(
                f"pg reads ({int(length):,} events)",
                "cold page of 50 (ms) / Host.resume (ms)",
                f"{_range(item.get('cold_page_ms'))} / {_range(item.get('resume_ms'))}",
                f"cold page at {int(lengths[0]):,} events",
                _ratio(page_ratio),
                "cold page ≤ 3× small",
                None if page_ratio is None else page_ratio <= 3,
            )
        )
    takeover = r.get("takeover") or {}
    median = (takeover.get("takeover_s") or {}).get("median")
    rows.append(
        _row(
            "pg takeover (SIGKILL of the owner)",
            f"until another host may resume (s), TTL {takeover.get('ttl_s')} s",
            _range(takeover.get("takeover_s"), digits=2),
            "–",
            "–",
            f"≤ TTL + 2 s ({takeover.get('target_s')} s)",
            None if median is None else median <= takeover.get("target_s", 0),
        )
    )
    messages = r.get("messages") or {}
    if messages:
        rows.append(
            _row(
                "pg message latency (POST → stored)",
                f"through a non-owner host (inbox), {messages.get('rounds')} rounds (ms)",
                _range(messages.get("non_owner_ms"), digits=1),
                f"through the owner: {_range(messages.get('owner_ms'), digits=1)}",
                _ratio(messages.get("ratio")),
                "",
                None,
            )
        )
    return rows


def _wake(name: str, r: dict[str, Any], cases: dict[str, Any]) -> list[Row]:
    startup, after = r.get("startup", {}), r.get("after_restart", {})
    process = startup.get("process", {})
    empty = (process.get("empty_first_200_ms") or {}).get("median")
    indexed = (process.get("indexed_first_200_ms") or {}).get("median")
    ratio = _div(indexed, empty)
    sessions = after.get("sessions")
    scan = startup.get("full_scan", {})
    durable = after.get("durable_ms")
    p99 = (durable or {}).get("p99")
    rss = after.get("rss_mb", {})
    return [
        _row(
            "10 wake",
            f"dsh web start → first 200, {_num(sessions)} indexed cold Sessions (ms)",
            _range(process.get("indexed_first_200_ms"), digits=0),
            f"empty data dir {_range(process.get('empty_first_200_ms'), digits=0)}",
            _ratio(ratio),
            "≤ 1.5× empty",
            None if ratio is None else ratio <= 1.5,
        ),
        _row(
            "",
            "Host start: index read and armed / full scan of every log (ms)",
            f"{_mp(startup.get('indexed', {}).get('ready_ms'))}",
            f"full scan {_mp(scan.get('ready_ms'))}",
            _ratio(
                _div(
                    (scan.get("ready_ms") or {}).get("median"),
                    (startup.get("indexed", {}).get("ready_ms") or {}).get("median"),
                )
            ),
            "",
            None,
        ),
        _row(
            "",
            f"durable dispatch after target, {_num(sessions)} woken over "
            f"{_num(after.get('window_s'))} s, p50 / p99",
            _mp(durable),
            f"missing {after.get('missing')}",
            "",
            "p99 ≤ 100 ms",
            None if p99 is None else p99 <= 100 and not after.get("missing"),
        ),
        _row(
            "",
            "RSS before start → after the window; peak descriptors",
            f"{_num(rss.get('before_start'))} → {_num(rss.get('after_window'))} MB; "
            f"{_num(after.get('peak_descriptors'))} fds",
            f"hibernated {_num(after.get('hibernated'))}",
            "",
            "",
            None,
        ),
    ]


def _hibernate(name: str, r: dict[str, Any], cases: dict[str, Any]) -> list[Row]:
    on, off = r.get("with_hibernation", {}), r.get("without", {})
    return [
        _row(
            "11 hibernate",
            f"after serving {_num(r.get('sessions'))} Sessions: open descriptors, RSS growth",
            f"{_num(on.get('open_descriptors'))} fds, {_num(on.get('rss_mb'))} MB "
            f"({_num(on.get('live_sessions'))} live)",
            f"without: {_num(off.get('open_descriptors'))} fds, {_num(off.get('rss_mb'))} MB",
            "",
            "fds bounded by live Sessions",
            None
            if on.get("open_descriptors") is None
            else on["open_descriptors"] <= on.get("live_sessions", 0) + 8,
        )
    ]


def _storm(name: str, r: dict[str, Any], cases: dict[str, Any]) -> list[Row]:
    """Issue 36's storm: p99 of each lateness against N × fsync of the same run, the
    peer firing as many jobs at one instant beside it."""
    hot = name == "storm-hot"
    limit = 2.0 if hot else 3.0
    sessions = r.get("sessions")
    fsync = r.get("fsync_files_ms") or {}
    bound = (
        f"N × fsync = {_num(r.get('fsync_bound_ms'), ' ms')} "
        f"({_num(fsync.get('median'), ' ms', 3)} each)"
    )
    peers = "; ".join(
        text
        for text in (
            _peer_text(cases.get("storm-peer") or {}, "APScheduler SQLite"),
            _peer_text(cases.get("storm-peer-memory") or {}, "in memory"),
        )
        if text
    )
    ratio = r.get("durable_p99_to_bound")
    lost = r.get("missing") or r.get("stored_missing") or r.get("duplicated")
    rss = r.get("rss_mb") or {}
    label = "hot (all live)" if hot else "cold, woken by the index"
    return [
        _row(
            f"10b storm, {label} ({_num(sessions)} at once)",
            "durable dispatch after target, p50 / p99 / max",
            f"{_mp(r.get('durable_ms'), '')} / {_num((r.get('durable_ms') or {}).get('max'))} ms"
            + _late_start(r),
            bound + (f"; {peers}" if peers else ""),
            _ratio(ratio),
            f"p99 ≤ {limit:.0f}× the fsync bound; 0 missing, 0 duplicated",
            None if ratio is None else ratio <= limit and not lost,
        ),
        _row(
            "",
            "follow-up message after target, p50 / p99 / max",
            f"{_mp(r.get('followup_ms'), '')} / {_num((r.get('followup_ms') or {}).get('max'))} ms",
            bound,
            _ratio(r.get("followup_p99_to_bound")),
            "",
            None,
        ),
        _row(
            "",
            "missing (probe / stored), duplicated; peak RSS, peak descriptors",
            f"{_num(r.get('missing'))} / {_num(r.get('stored_missing'))}, "
            f"{_num(r.get('duplicated'))}; {_num(rss.get('before'))} → "
            f"{_num(rss.get('peak'))} MB ({_num(r.get('rss_kib_per_session'))} KiB per "
            f"Session), {_num(r.get('peak_descriptors'))} fds",
            "",
            "",
            "0, 0",
            None if r.get("missing") is None else not lost,
        ),
    ]


def _storm_pg(name: str, r: dict[str, Any], cases: dict[str, Any]) -> list[Row]:
    """Issue 36, item 6: the storm on PostgreSQL, two hosts beside one, against N × commit."""
    bound = f"N × (INSERT + COMMIT) = {_num(r.get('commit_bound_ms'), ' ms')}"
    rows: list[Row] = []
    for key, label in (("two_hosts", "two hosts"), ("one_host", "one host")):
        run = r.get(key) or {}
        durable = run.get("durable_ms") or {}
        lost = run.get("missing") or run.get("stored_missing") or run.get("duplicated")
        shares = ", ".join(f"{n}" for n in (run.get("by_host") or {}).values())
        server = run.get("server") or {}
        rows.append(
            _row(
                f"10c storm on PostgreSQL, {label} ({_num(run.get('sessions'))} at once)"
                if key == "two_hosts"
                else "",
                f"{label}: durable dispatch p50 / p99 / max; follow-up p50 / p99",
                f"{_mp(durable, '')} / {_num(durable.get('max'))} ms; "
                f"{_mp(run.get('followup_ms'))}",
                f"{bound}; dispatched by each host {shares}; "
                f"missing {_num(run.get('stored_missing'))}, "
                f"duplicated {_num(run.get('duplicated'))}; "
                f"{_num(server.get('wal_syncs_per_session'), '', 2)} WAL flushes per Session",
                _ratio(run.get("durable_p99_to_bound")),
                "0 missing, 0 duplicated",
                None if run.get("missing") is None else not lost,
            )
        )
    ratio = (r.get("two_to_one") or {}).get("p99")
    rows.append(
        _row(
            "",
            "two hosts ÷ one host, durable dispatch p99",
            _ratio(ratio),
            "one host on the same database, same run",
            _ratio(ratio),
            "–",
            None,
        )
    )
    return rows


_HOSTILE = {
    "calls": "a reply with {calls:,} schedule_create calls",
    "deep": "arguments nested 250 deep, beside a good call",
    "nan": "NaN in arguments, beside a good call",
    "large": "5 MiB of arguments, beside a good call",
}


def _hostile(name: str, r: dict[str, Any], cases: dict[str, Any]) -> list[Row]:
    rows = []
    for key, what in _HOSTILE.items():
        item = r.get(key)
        if not item:
            continue
        results = ", ".join(f"{count} {code}" for code, count in item.get("results", {}).items())
        rows.append(
            _row(
                "10 hostile reply",
                what.format(calls=item.get("calls", 0)),
                f"turn {_num(item.get('turn_seconds'), ' s', 3)}; "
                f"{item.get('events_added')} events, {item.get('log_bytes'):,} B log; "
                f"results: {results}; {item.get('reminders_created')} reminders",
                "",
                "",
                "nothing lost, log reads back",
                bool(item.get("reads_back")),
            )
        )
    return rows


def _demo(name: str, r: dict[str, Any], cases: dict[str, Any]) -> list[Row]:
    reply = r.get("reply_ms") or {}
    return [
        _row(
            "demo model",
            "plugin import (dateparser not loaded)",
            _num(r.get("plugin_import_ms"), " ms"),
            "",
            "",
            "dateparser not imported",
            r.get("dateparser_at_import") is False,
        ),
        _row(
            "demo model",
            "first reply that reads a time (loads dateparser)",
            f"{_num(r.get('first_reply_ms'), ' ms')}, +{_num(r.get('rss_mib'), ' MiB')}",
            "",
            "",
            "≤ 1,000 ms",
            _below(r.get("first_reply_ms"), 1000),
        ),
        _row(
            "demo model",
            f"later replies, {r.get('phrases')} README phrases (median / p99)",
            f"{_num(reply.get('median'), ' ms', 2)} / {_num(reply.get('p99'), ' ms', 2)}",
            "",
            "",
            "median ≤ 10 ms",
            _below(reply.get("median"), 10),
        ),
    ]


def _below(value: Any, limit: float) -> bool | None:
    return None if not isinstance(value, int | float) else value <= limit


def _codec(name: str, r: dict[str, Any], cases: dict[str, Any]) -> list[Row]:
    rows = []
    speeds = r.get("assistant") or {}
    old = speeds.get("first edition (pydantic model)") or {}
    new = speeds.get("dsh (pydantic-core, bytes held)") or {}
    held = r.get("held") or {}
    old_held = held.get("first edition (pydantic model)") or {}
    new_held = held.get("dsh (pydantic-core, bytes held)") or {}
    for key, figure in (("read_us", "read a stored line (µs)"), ("build_us", "build (µs)")):
        rows.append(
            _row(
                "11 codec (message/assistant)",
                figure,
                _num(new.get(key), " µs", 2),
                f"first edition: {_num(old.get(key), ' µs', 2)}",
                _ratio(_div(new.get(key), old.get(key))),
                "",
                None,
            )
        )
    rows.append(
        _row(
            "11 codec (message/assistant)",
            "held event: bytes / GC-tracked objects",
            f"{new_held.get('bytes')} B / {new_held.get('gc_objects')}",
            f"first edition: {old_held.get('bytes')} B / {old_held.get('gc_objects')}",
            _ratio(_div(new_held.get("bytes"), old_held.get("bytes"))),
            "",
            None,
        )
    )
    return rows


def _alerts(name: str, r: dict[str, Any], cases: dict[str, Any]) -> list[Row]:
    live, start = r.get("live") or {}, r.get("start") or {}
    frame = live.get("frame_after_flush_ms")
    flush = live.get("flush_ms")
    opened = start.get("open_ms")
    parsed = start.get("json_loads_ms")
    return [
        _row(
            f"15 alerts ({_num(live.get('rounds'))} flushes)",
            "flush returned → alert frame at a watcher (median / p99)",
            _mp(frame, digits=2),
            f"the flush itself: {_mp(flush, digits=2)}",
            _ratio(_div((frame or {}).get("median"), (flush or {}).get("median"))),
            "",
            None,
        ),
        _row(
            f"15 alerts ({_num(start.get('sessions'))} Sessions unread)",
            "start-up: attention.jsonl opened, first unread() (median)",
            _num((opened or {}).get("median"), " ms", 1),
            f"read + json.loads of its lines: {_num((parsed or {}).get('median'), ' ms', 1)}",
            _ratio(_div((opened or {}).get("median"), (parsed or {}).get("median"))),
            "",
            None,
        ),
    ]


def _search(name: str, r: dict[str, Any], cases: dict[str, Any]) -> list[Row]:
    shape = f"{_num(r.get('sessions'))} Sessions × {_num(r.get('messages_per_session'))} messages"
    every = r.get("all_ms") or {}
    rows = [
        _row(
            f"19 search ({shape})",
            "a search, every query (median / p99)",
            _mp(every),
            f"built at {_num(r.get('build_messages_per_s'))} messages/s, "
            f"{_num((r.get('file_bytes') or 0) / 1e6, ' MB')}",
            "",
            "median ≤ 50 ms",
            None if not every.get("n") else every["median"] <= 50,
        )
    ]
    for text, figures in (r.get("queries") or {}).items():
        rows.append(
            _row(
                f"19 search `{text}`",
                f"found {figures.get('sessions')} Sessions (median / p99)",
                _mp(figures.get("ms")),
                "",
                "",
                "",
                None,
            )
        )
    return rows


def _notify(name: str, r: dict[str, Any], cases: dict[str, Any]) -> list[Row]:
    healthy, failing = r.get("healthy") or {}, r.get("one_failing") or {}
    shape = f"{_num(healthy.get('alerts'))} alerts over {_num(healthy.get('window_s'))} s"
    sent, kept = healthy.get("alert_to_received_ms"), healthy.get("outbox_record_ms")
    sent_failing = failing.get("alert_to_received_ms")
    return [
        _row(
            f"18 notify ({shape})",
            "alert durable → json:// webhook received it (median / p99)",
            _mp(sent, digits=2),
            f"the outbox's record of it: {_mp(kept, digits=2)}",
            _ratio(_div((sent or {}).get("median"), (kept or {}).get("median"))),
            "",
            None,
        ),
        _row(
            f"18 notify ({shape})",
            "the same, another channel hanging 5 s per send (median / p99)",
            _mp(sent_failing, digits=2),
            f"all channels healthy: {_mp(sent, digits=2)}",
            _ratio(_div((sent_failing or {}).get("p99"), (sent or {}).get("p99"))),
            "",
            None,
        ),
    ]


def _store_copy(name: str, r: dict[str, Any], cases: dict[str, Any]) -> list[Row]:
    shape = f"{r.get('sessions', 0):,} Sessions × {r.get('events_per_session', 0)} events"
    rows = []
    for key, figure, raw, limit in (
        ("jsonl_to_pg", "JSONL → PostgreSQL", "raw_into_pg", "read files, one INSERT each"),
        ("pg_to_jsonl", "PostgreSQL → JSONL", "raw_into_files", "SELECT, write + fsync each"),
    ):
        item, ceiling = r.get(key) or {}, r.get(raw) or {}
        share = item.get("share_of_raw")
        rows.append(
            _row(
                "store copy",
                f"{figure}, {shape}: Sessions/s · events/s (read back, compared)",
                f"{_range(item.get('sessions_per_s'), digits=0)} · "
                f"{_range(item.get('events_per_s'), digits=0)}",
                f"{limit}: {_range(ceiling.get('events_per_s'), digits=0)} events/s",
                _percent(share),
                "–",
                None,
            )
        )
    again = r.get("again") or {}
    rows.append(
        _row(
            "store copy",
            "a second run, nothing to copy (s)",
            _range(again.get("seconds"), digits=2),
            f"the first run: {_range((r.get('jsonl_to_pg') or {}).get('seconds'), digits=2)} s",
            _ratio(
                _div(
                    (again.get("seconds") or {}).get("median"),
                    ((r.get("jsonl_to_pg") or {}).get("seconds") or {}).get("median"),
                )
            ),
            "–",
            None,
        )
    )
    return rows


_ROWS: dict[str, Callable[[str, dict[str, Any], dict[str, Any]], list[Row]]] = {
    "store-copy": _store_copy,
    "alerts": _alerts,
    "notify": _notify,
    "hostile": _hostile,
    "codec": _codec,
    "demo": _demo,
    "idle": _idle,
    "spread": _spread,
    "spread-recurring": _recurring,
    "catchup": _catchup,
    "search": _search,
    "fold": _fold,
    "durability": _durability,
    "resume": _resume,
    "history": _history,
    "fanout": _fanout,
    "memory": _memory,
    "idle-cpu": _idle_cpu,
    "coldstart": _coldstart,
    "pg": _pg,
    "wake": _wake,
    "hibernate": _hibernate,
    "storm": _storm,
    "storm-hot": _storm,
    "storm-pg": _storm_pg,
}


def table_rows(cases: dict[str, Any]) -> list[Row]:
    """Every row of the table, in case order; a failed case gives one `error` row."""
    rows: list[Row] = []
    for name, result in cases.items():
        if "error" in result:
            rows.append(_row(name, "error", str(result["error"]), "", "", "", False))
            continue
        if "skipped" in result:
            rows.append(_row(name, "skipped", str(result["skipped"]), "", "", "", None))
            continue
        build = _burst if name.startswith("burst-") else _ROWS.get(name)
        if build is not None:
            rows.extend(build(name, result, cases))
    return rows


def render(report: dict[str, Any]) -> str:
    """The header and the Markdown table of `report`."""
    m = report["machine"]
    lines = [
        f"dsh bench — profile {report['profile']}, {report['started']} UTC, {report['seconds']} s",
        f"machine: {m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB; {m['python']}; "
        f"{m['kernel']}; data dir on {m['filesystem']} ({m['disk']}); "
        f"load average {m.get('load_before')} → {m.get('load_after')}",
        "",
        "| case | figure | measured | limit / peer (same run) | ratio | target | verdict |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in report["table"]:
        lines.append(
            f"| {row['case']} | {row['figure']} | {row['measured']} | {row['limit']} "
            f"| {row['ratio']} | {row['target']} | {row['verdict']} |"
        )
    return "\n".join(lines)
