"""What crosses the cut: a dense tensor, a sparse (values, positions) pair, or rows that each stand
for several samples (:class:`GroupedPayload`).

A dense or sparse payload has one row per sample. A grouped payload does not: its helpers below
index by sample all the same (:func:`take`, :func:`concat`, :func:`samples_of`), and what crosses the
wire is its rows alone.

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
        values: ``(B, k_s · block)`` float values, the part that carries gradient.
        indices: ``(B, k_s)`` integer positions (int16 where they fit, to keep the wire small), each
            of a run of ``block`` consecutive values: position ``i`` covers ``[i·block, (i+1)·block)``.
        dense_numel: length of the dense vector the positions index into.
        block: values per position (1: top-K's single values; ``H·W``: DISCO's whole channels).
    """

    values: Tensor
    indices: Tensor
    dense_numel: int
    block: int = 1

    def to_dense(self) -> Tensor:
        dense = self.values.new_zeros(self.values.shape[0], self.dense_numel)
        return dense.scatter(1, self.positions(), self.values)

    def positions(self) -> Tensor:
        """The flat dense position of every value, ``(B, k_s · block)``."""
        starts = self.indices.long()
        if self.block == 1:
            return starts
        offsets = torch.arange(self.block, device=starts.device)
        return (starts.unsqueeze(-1) * self.block + offsets).flatten(1)

    def like(self, values: Tensor, indices: Tensor) -> SparsePayload:
        """A plain sparse payload of the same layout with ``values`` at ``indices``."""
        return SparsePayload(values, indices, self.dense_numel, self.block)


@dataclass
class GroupedPayload:
    """Rows that each stand for up to ``group_size`` samples at once (C3-SL's superposed groups).

    A batch of ``B`` samples crosses as ``⌈B/R⌉`` rows: sample ``i`` sits in row ``i // R`` at slot
    ``i % R``. Only ``rows`` is on the wire; the layout follows from the batch order and ``B``.
    After :func:`take` a payload may keep only some samples of a row (the row itself is kept whole).

    Attributes:
        rows: ``(G, ...)`` float rows, the part that carries gradient.
        row_of: ``(B,)`` integer row of each sample.
        slot_of: ``(B,)`` integer slot of each sample in its row (which key bound it, for C3-SL).
        group_size: samples a full row stands for (``R``).
    """

    rows: Tensor
    row_of: Tensor
    slot_of: Tensor
    group_size: int

    @classmethod
    def in_order(cls, rows: Tensor, samples: int, group_size: int) -> GroupedPayload:
        """The layout of a fresh batch: ``samples`` samples filling ``rows`` ``group_size`` at a time."""
        order = torch.arange(samples, device=rows.device)
        return cls(rows, order // group_size, order % group_size, group_size)

    def with_rows(self, rows: Tensor) -> GroupedPayload:
        return GroupedPayload(rows, self.row_of, self.slot_of, self.group_size)


Payload = Tensor | SparsePayload | GroupedPayload


def values_of(payload: Payload) -> Tensor:
    """The float tensor of a payload that gradients flow through (a grouped payload's rows)."""
    if isinstance(payload, SparsePayload):
        return payload.values
    if isinstance(payload, GroupedPayload):
        return payload.rows
    return payload


def with_values(payload: Payload, values: Tensor) -> Payload:
    """The same payload with its float tensor replaced (used by payload transforms such as DP)."""
    if isinstance(payload, SparsePayload):
        return payload.like(values, payload.indices)
    if isinstance(payload, GroupedPayload):
        return payload.with_rows(values)
    return values


def samples_of(payload: Payload) -> int:
    """The number of samples a payload stands for (its rows, unless it is grouped)."""
    if isinstance(payload, GroupedPayload):
        return len(payload.row_of)
    return len(values_of(payload))


def per_sample(payload: Payload, per_row: Tensor) -> Tensor:
    """``per_row``, one entry per row of ``payload``'s values, as one entry per sample: a sample of a
    grouped payload gets its row's entry (e.g. the gradient the server returned for that row)."""
    return per_row[payload.row_of] if isinstance(payload, GroupedPayload) else per_row


def as_vector(payload: Payload) -> Tensor:
    """A dense ``(B, n)`` float view of the payload, one row per sample (sparse payloads are scattered
    to dense; each sample of a grouped payload gets the whole row it travelled in)."""
    if isinstance(payload, SparsePayload):
        return payload.to_dense()
    return per_sample(payload, values_of(payload).flatten(1))


def take(payload: Payload, index: slice | Tensor) -> Payload:
    """The samples ``index`` (a slice or an index tensor) of a batch of payloads. A grouped payload
    keeps the rows those samples travelled in, whole, and differentiably."""
    if isinstance(payload, SparsePayload):
        return payload.like(payload.values[index], payload.indices[index])
    if isinstance(payload, GroupedPayload):
        kept, row_of = torch.unique(payload.row_of[index], return_inverse=True)
        return GroupedPayload(payload.rows[kept], row_of, payload.slot_of[index], payload.group_size)
    return payload[index]


def concat(payloads: list[Payload]) -> Payload:
    """Batches of payloads of one kind, joined along the batch."""
    if isinstance(payloads[0], SparsePayload):
        return payloads[0].like(torch.cat([p.values for p in payloads]), torch.cat([p.indices for p in payloads]))
    if isinstance(payloads[0], GroupedPayload):
        offsets = [0]
        for p in payloads[:-1]:
            offsets.append(offsets[-1] + len(p.rows))
        return GroupedPayload(
            torch.cat([p.rows for p in payloads]),
            torch.cat([p.row_of + offset for p, offset in zip(payloads, offsets)]),
            torch.cat([p.slot_of for p in payloads]),
            payloads[0].group_size,
        )
    return torch.cat(payloads)


def wire_tensors(payload: Payload) -> tuple[Tensor, ...]:
    """The tensors a real implementation would put on the wire (a grouped payload: its rows only)."""
    if isinstance(payload, SparsePayload):
        return (payload.values, payload.indices)
    if isinstance(payload, GroupedPayload):
        return (payload.rows,)
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
        return payload.like(values, payload.indices.detach().clone())
    if isinstance(payload, GroupedPayload):
        return GroupedPayload(values, payload.row_of.clone(), payload.slot_of.clone(), payload.group_size)
    return values


def detach(payload: Payload) -> Payload:
    """A detached copy, e.g. for an observer that must not reach the client's graph."""
    values = values_of(payload).detach()
    if isinstance(payload, SparsePayload):
        return payload.like(values, payload.indices.detach())
    if isinstance(payload, GroupedPayload):
        return payload.with_rows(values)
    return values


def index_dtype(dense_numel: int) -> torch.dtype:
    """The smallest signed integer dtype that can index ``dense_numel`` positions."""
    return torch.int16 if dense_numel <= torch.iinfo(torch.int16).max + 1 else torch.int32
