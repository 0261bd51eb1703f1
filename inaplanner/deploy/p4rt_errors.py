"""Client side of P4Runtime write errors: the per-update results a failed ``Write`` carries in its
``grpc-status-details-bin`` trailer (P4Runtime spec section 12.3, "Batch error reporting").
"""

from __future__ import annotations

from dataclasses import dataclass

import grpc
from google.rpc import code_pb2, status_pb2
from p4.v1 import p4runtime_pb2

DETAILS_KEY = "grpc-status-details-bin"


@dataclass(frozen=True)
class UpdateStatus:
    """The outcome of one update of a batch: ``code`` is a google.rpc.Code number."""

    index: int
    code: int
    message: str

    @property
    def ok(self) -> bool:
        return self.code == code_pb2.OK

    @property
    def code_name(self) -> str:
        return code_pb2.Code.Name(self.code) if self.code in code_pb2.Code.values() else str(self.code)


def parse_status_details(data: bytes) -> list[UpdateStatus]:
    """Per-update results from the bytes of ``grpc-status-details-bin``."""
    status = status_pb2.Status()
    status.ParseFromString(data)
    out = []
    for i, any_msg in enumerate(status.details):
        err = p4runtime_pb2.Error()
        if not any_msg.Unpack(err):
            raise ValueError(f"detail {i} is a {any_msg.type_url}, not a p4.v1.Error")
        out.append(UpdateStatus(i, err.canonical_code, err.message))
    return out


def parse_write_error(exc: grpc.RpcError) -> list[UpdateStatus] | None:
    """Per-update results carried by a failed Write, or None when it carries none.

    None means the whole RPC failed (PERMISSION_DENIED, FAILED_PRECONDITION, UNAVAILABLE ...):
    no update was applied; read ``exc.code()`` and ``exc.details()``.
    """
    trailing = exc.trailing_metadata() if hasattr(exc, "trailing_metadata") else None
    for key, value in trailing or ():
        if key == DETAILS_KEY:
            return parse_status_details(value)
    return None
