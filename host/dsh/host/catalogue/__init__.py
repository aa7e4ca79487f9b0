"""Reading storage for one Host: what it can prove, cheaply (DESIGN §4, §9).

`StorageReader` answers tails, cold headers, history pages and the proven
stored prefix of live Sessions (`PrefixProof`); `StoredLog` is a cold
Session's log as a `dsh.SessionLog`, read ranged and type-filtered from a
worker thread. The web layer reaches all of it through the `Host`.
"""

from .pages import HistoryPage, PageRequest, page_bounds
from .proof import PrefixProof
from .reader import StorageReader
from .storedlog import StoredLog

__all__ = ["HistoryPage", "PageRequest", "PrefixProof", "StorageReader", "StoredLog", "page_bounds"]
