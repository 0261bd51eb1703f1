"""Server side of P4Runtime Write errors: building ``grpc-status-details-bin``.

When some updates of a WriteRequest fail, a P4Runtime server answers the RPC with gRPC status
UNKNOWN and trailing metadata ``grpc-status-details-bin`` holding a ``google.rpc.Status`` whose
``details`` are one ``p4.v1.Error`` per update, in request order, with ``canonical_code`` OK for
the updates that succeeded (P4Runtime spec section 12.3, "Error reporting"; the shape bmv2/PI and
Stratum return). p4runtime-shell's ``P4RuntimeErrorIterator`` never advances past an OK entry
(its ``continue`` skips the index increment), so a batch with an OK before a failure makes it
loop forever: :func:`inaplanner.deploy.p4rt_errors.parse_write_error` is the parser clients use instead.
"""

from __future__ import annotations

from google.rpc import code_pb2, status_pb2
from p4.v1 import p4runtime_pb2

#: The trailer that carries the per-update results (the same key the client reads).
DETAILS_KEY = "grpc-status-details-bin"

__all__ = ["DETAILS_KEY", "build_write_status"]


def build_write_status(results: list[tuple[int, str]]) -> status_pb2.Status:
    """The ``google.rpc.Status`` of a batch whose per-update results are ``(code, message)``."""
    status = status_pb2.Status(code=code_pb2.UNKNOWN, message="Write failure.")
    for code, message in results:
        status.details.add().Pack(p4runtime_pb2.Error(canonical_code=code, message=message))
    return status
