"""The Host and its lifecycle: the composition root of one dsh process (docs/DESIGN.md §1).

`host.Host` wires the layers below together; the modules beside it hold the
parts it composes.
"""
