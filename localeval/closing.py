"""What holds something to close (a connection, a cache, a counting judge's vocabulary) is
a context manager by one rule: `with` hands back the object and closes it when the block
ends, however it ends. The stores, an evaluation, an estimate's count and a calibration
inherit it and say only what closing is."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Self


class Closing(ABC):
    """Closed when its `with` block ends, however it ends (an exception is not swallowed)."""

    @abstractmethod
    def close(self) -> None:
        """Free what the object holds."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
