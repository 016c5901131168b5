"""Splitting a dataset across machines: `evaluate --shard K/N` scores the samples of shard
K of N, and `runs merge` puts the shards back together into one run.

A sample's shard follows from its id alone (a hash of it, modulo N), never from its place in
the file: every worker computes the same split, and adding or moving rows moves no other
sample to another shard.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from localeval.errors import UsageError, param

_FORM = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


@dataclass(frozen=True)
class Shard:
    """Shard `index` (1-based) of `count`."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """K/N, e.g. "2/4"; UsageError if it is not that or K is not in 1..N."""
        match = _FORM.fullmatch(text)
        if match is None:
            raise UsageError(f"{param('shard')} '{text}': expected K/N, e.g. 1/4")
        index, count = int(match.group(1)), int(match.group(2))
        if count < 1 or not 1 <= index <= count:
            raise UsageError(f"{param('shard')} '{text}': K must be between 1 and N")
        return cls(index, count)

    def holds(self, sample_id: str) -> bool:
        """Whether the sample with this id is in this shard."""
        digest = hashlib.sha256(sample_id.encode("utf-8")).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.index - 1

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"
