from __future__ import annotations

import pytest

from dsh.persistence import Backend, MemoryBackend

from .contract import BackendContract


class TestMemoryBackendContract(BackendContract):
    @pytest.fixture
    def backend(self) -> Backend:
        return MemoryBackend()
