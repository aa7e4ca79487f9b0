"""Test support shipped with the host: a fake clock and fault-injecting storage.

Plugins use these in their own tests; nothing here runs in production.
"""

from .clock import FakeClock
from .faults import Fault, FaultyBackend, Hold, InjectedFault, Operation

__all__ = ["FakeClock", "Fault", "FaultyBackend", "Hold", "InjectedFault", "Operation"]
