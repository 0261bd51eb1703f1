"""Aggregator index of a gradient fragment: ATP's hash(jobID, seqNum) (ESA §2.1, §5.1).

One definition serves the simulator and the data plane, so both place a fragment in the same
aggregator::

    index = base + CRC32(seed:32 || job:16 || seq:32) mod size

CRC32 is the usual reflected CRC-32 (polynomial 0x04C11DB7, init and final XOR 0xFFFFFFFF: Python's
``zlib.crc32``, P4's ``HashAlgorithm.crc32``) over the big-endian concatenation of the three fields, i.e.
the P4 ``hash(index, HashAlgorithm.crc32, base, {seed, job, seq}, size)`` with bit<32> seed, bit<16>
job and bit<32> seq. ``base``/``size`` is the job's aggregator range on that switch (the whole pool for
ATP and ESA, the job's own slice for SwitchML, which indexes ``base + seq mod size`` instead).
"""

from __future__ import annotations

import struct
import zlib

from inaplanner.errors import InaplannerError

_PACK = struct.Struct(">IHI")


def agg_index(job_num: int, seq: int, size: int, base: int = 0, seed: int = 0) -> int:
    """The aggregator a fragment (job, seq) hashes to, in ``base .. base + size - 1``."""
    if size < 1:
        raise InaplannerError(f"aggregator range must hold at least 1 aggregator, got {size}")
    if not 0 <= job_num < 1 << 16:
        raise InaplannerError(f"job number must fit 16 bits, got {job_num}")
    return base + zlib.crc32(_PACK.pack(seed & 0xFFFFFFFF, job_num, seq & 0xFFFFFFFF)) % size


def seed_for(name: str, salt: int = 0) -> int:
    """A 32-bit hash seed derived from a name (a switch id) and a salt, stable across runs."""
    return zlib.crc32(f"{salt}:{name}".encode())
