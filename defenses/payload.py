"""What crosses the cut: a dense tensor, or a sparse (values, positions) pair.

The engine moves a payload from client to server with :func:`cross_to_server`, which cuts the autograd
graph exactly where the network does: the server gets leaf tensors, computes, and the gradient of its
leaves is what travels back.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor


@dataclass
class SparsePayload:
    """Per-sample kept values and their flat positions in a dense vector of length ``dense_numel``.

    Attributes:
        values: ``(B, k_s)`` float values, the part that carries gradient.
        indices: ``(B, k_s)`` integer positions (int16 where they fit, to keep the wire small).
        dense_numel: length of the dense vector the positions index into.
    """

    values: Tensor
    indices: Tensor
    dense_numel: int

    def to_dense(self) -> Tensor:
        dense = self.values.new_zeros(self.values.shape[0], self.dense_numel)
        return dense.scatter(1, self.indices.long(), self.values)


Payload = Tensor | SparsePayload


def values_of(payload: Payload) -> Tensor:
    """The float tensor of a payload that gradients flow through."""
    return payload.values if isinstance(payload, SparsePayload) else payload


def with_values(payload: Payload, values: Tensor) -> Payload:
    """The same payload with its float tensor replaced (used by payload transforms such as DP)."""
    if isinstance(payload, SparsePayload):
        return SparsePayload(values, payload.indices, payload.dense_numel)
    return values


def as_vector(payload: Payload) -> Tensor:
    """A dense ``(B, n)`` float view of the payload (sparse payloads are scattered to dense)."""
    if isinstance(payload, SparsePayload):
        return payload.to_dense()
    return payload.flatten(1)


def take(payload: Payload, index: slice | Tensor) -> Payload:
    """The rows ``index`` (a slice or an index tensor) of a batch of payloads."""
    if isinstance(payload, SparsePayload):
        return SparsePayload(payload.values[index], payload.indices[index], payload.dense_numel)
    return payload[index]


def concat(payloads: list[Payload]) -> Payload:
    """Batches of payloads of one kind, joined along the batch."""
    if isinstance(payloads[0], SparsePayload):
        return SparsePayload(
            torch.cat([p.values for p in payloads]), torch.cat([p.indices for p in payloads]), payloads[0].dense_numel
        )
    return torch.cat(payloads)


def wire_tensors(payload: Payload) -> tuple[Tensor, ...]:
    """The tensors a real implementation would put on the wire."""
    if isinstance(payload, SparsePayload):
        return (payload.values, payload.indices)
    return (payload,)


def nbytes(tensors: tuple[Tensor, ...] | Tensor) -> int:
    """Bytes of the given tensors at their own dtypes."""
    if isinstance(tensors, Tensor):
        tensors = (tensors,)
    return sum(t.numel() * t.element_size() for t in tensors)


def cross_to_server(payload: Payload) -> Payload:
    """Copy a payload to the server side: detached leaves, float part requiring grad."""
    values = values_of(payload).detach().clone().requires_grad_(True)
    if isinstance(payload, SparsePayload):
        return SparsePayload(values, payload.indices.detach().clone(), payload.dense_numel)
    return values


def detach(payload: Payload) -> Payload:
    """A detached copy, e.g. for an observer that must not reach the client's graph."""
    values = values_of(payload).detach()
    if isinstance(payload, SparsePayload):
        return SparsePayload(values, payload.indices.detach(), payload.dense_numel)
    return values


def index_dtype(dense_numel: int) -> torch.dtype:
    """The smallest signed integer dtype that can index ``dense_numel`` positions."""
    return torch.int16 if dense_numel <= torch.iinfo(torch.int16).max + 1 else torch.int32
