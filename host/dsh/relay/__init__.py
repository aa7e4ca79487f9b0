"""What a host does for Sessions another host owns, on a store several hosts share.

- `InboxRelay` (`messages`): a person's message posted on any host is queued
  by the owner of its Session.
- `ActionRelay` (`actions`): a person's action posted on any host runs on the
  owner, and the host it was posted to answers with the owner's answer.
"""

from .actions import ActionRelay
from .errors import Unclaimed
from .messages import InboxRelay

__all__ = ["ActionRelay", "InboxRelay", "Unclaimed"]
