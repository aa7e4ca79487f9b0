"""The Session log and the live Sessions (docs/DESIGN.md §2, §3).

A Session is an append-only log of `SessionEvent`s under a `SessionHeader`
(`log`); the host's own event types and payloads are in `events`; the live
Sessions of one host, every append and the durability barrier in `live`; what
the Session list shows of a log in `summary` and `facts`. Storage is the layer
above (`dsh.persistence`); this one knows nothing of it.
"""
