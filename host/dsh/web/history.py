"""History pages over HTTP: the Host's `history_page`, in its public JSON form (DESIGN §9).

A page is `{"header","events","views","attached","tail"}`, where `views` maps
`"<seq>"` to the view of each event on the page that has one. What a page
may show is decided by the Host's storage reader (`dsh.reader`), which owns
what storage can prove: views only on a live Session's proven and confirmed
stored prefix (attached), or from the stored log of a cold one, read ranged
and type-filtered in a worker thread (detached). This module only shapes the
answer; it never touches storage itself.
"""

from __future__ import annotations

from typing import Any

from ..host.catalogue import PageRequest, page_bounds
from ..host.host import Host
from ..session.log import Session

__all__ = ["History", "PageRequest", "page_bounds"]


class History:
    """Reads history pages from one Host."""

    def __init__(self, host: Host) -> None:
        self._host = host

    async def page(self, session_id: str, request: PageRequest) -> dict[str, Any]:
        """The page of `session_id`; raises the Host's `SessionNotFound` if it is unknown."""
        return (await self._host.catalogue.page(session_id, request)).to_dict()

    async def proven_prefix(self, session: Session) -> int:
        """How many leading events of live `session` storage proves; 0 withholds every view."""
        return await self._host.catalogue.proven_prefix(session)
