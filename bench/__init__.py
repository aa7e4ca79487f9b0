"""dsh benchmarks: measured figures beside the limits and peers they are judged against.

`python -m bench` runs the suite (see `bench/README.md`); every case runs in a
fresh subprocess (`python -m bench.cases.<name>`) so that one case's garbage,
open files and timers never colour another's numbers.
"""
