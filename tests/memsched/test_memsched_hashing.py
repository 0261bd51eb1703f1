"""The aggregator index hash(job, seq) shared by the simulator and the data plane."""

from __future__ import annotations

import struct
import zlib
from collections import Counter

import pytest

from inaplanner.errors import InaplannerError
from inaplanner.memsched.hashing import agg_index, seed_for


def test_index_is_crc32_of_seed_job_seq_big_endian() -> None:
    for job, seq, size, base, seed in [(1, 0, 1000, 0, 0), (7, 123456, 20161, 5, 0xDEADBEEF),
                                       (65535, 2**32 - 1, 3, 100, 1)]:
        raw = struct.pack(">IHI", seed, job, seq)
        assert len(raw) == 10
        assert agg_index(job, seq, size, base, seed) == base + zlib.crc32(raw) % size


def test_index_stays_in_range_and_spreads() -> None:
    size = 64
    counts = Counter(agg_index(3, q, size, base=10, seed=42) for q in range(64 * 200))
    assert min(counts) == 10 and max(counts) == 73
    assert len(counts) == size
    assert max(counts.values()) < 2 * 200  # roughly uniform


def test_seed_changes_the_mapping() -> None:
    a = [agg_index(1, q, 1000, seed=seed_for("S1")) for q in range(50)]
    b = [agg_index(1, q, 1000, seed=seed_for("S2")) for q in range(50)]
    assert a != b
    assert seed_for("S1") == seed_for("S1") and seed_for("S1", 1) != seed_for("S1")


def test_bad_ranges_are_refused() -> None:
    with pytest.raises(InaplannerError):
        agg_index(1, 0, 0)
    with pytest.raises(InaplannerError):
        agg_index(70000, 0, 10)
