"""Build an attacker's view from a trained victim: the one place that touches the client for an attack.

Everything handed over is a copy computed here; the view keeps no reference to the client's head,
tail or private inputs (see :mod:`attacks.view`).
"""
from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from attacks.view import AttackerView, Capability, ClientPath, Observation
from bench.data.splits import CARVE_SEED, CarvedData
from bench.data.types import ArraySplit
from bench.run.cell import Cell
from bench.run.engine import SplitModel
from defenses import build_defense, split_name
from defenses.base import Defense
from defenses.payload import Payload, concat, cross_to_server, take, values_of
from victims import VICTIMS


def server_copy(defense: Defense) -> Defense:
    """A deep copy of ``defense`` with every client half removed (what the server itself runs)."""
    clone = copy.deepcopy(defense)
    for module in clone.modules():
        if isinstance(module, Defense):
            module.client_side = nn.Module()
    return clone.eval()


def client_factory(cell: Cell, data: CarvedData) -> Callable[[], ClientPath]:
    """Builds fresh, untrained client paths: the victim's head architecture and the defense's encoder
    with its public state (the same seeded R), without payload transforms such as DP noise."""
    victim = VICTIMS.get(cell.victim)()
    base_name, _ = split_name(cell.defense)
    # Close over plain values only: the closure is reachable from the view, the data is not.
    cut, seed, params = cell.cut, cell.seed, cell.defense_params()
    num_classes, input_shape = data.num_classes, data.input_shape

    def build() -> ClientPath:
        parts = victim.build(cut=cut, num_classes=num_classes, input_shape=input_shape)
        defense = build_defense(base_name, cut_shape=parts.cut_shape, seed=seed, **params)
        return ClientPath(parts.head, defense)

    return build


def defense_factory(cell: Cell, cut_shape: tuple[int, ...]) -> Callable[[], Defense]:
    """Builds fresh copies of the cell's defense without payload transforms (no DP noise)."""
    base_name, _ = split_name(cell.defense)
    seed, params, shape = cell.seed, cell.defense_params(), tuple(cut_shape)
    return lambda: build_defense(base_name, cut_shape=shape, seed=seed, **params)


@torch.no_grad()
def observe_payloads(model: SplitModel, x: Tensor, client: int = 0, batch_size: int = 500) -> Payload:
    """Payloads of ``x`` through the trained client path of ``client`` (evaluation mode)."""
    model.eval()
    path = ClientPath(model.head_of(client), model.defense)
    return concat([path(x[i : i + batch_size]) for i in range(0, len(x), batch_size)])


def observe_gradients(model: SplitModel, payload: Payload, y: Tensor, client: int = 0, batch_size: int = 500) -> Tensor:
    """Per-sample gradient of the task loss with respect to each payload, as the server returns it.

    Uses the summed loss in evaluation mode, so each row is that sample's own gradient.
    """
    model.eval()
    grads = []
    n = len(values_of(payload))
    for i in range(0, n, batch_size):
        part = take(payload, slice(i, i + batch_size))
        received = cross_to_server(part)
        logits = model.tail_of(client)(model.backbone(model.defense.decode(received)))
        F.cross_entropy(logits, y[i : i + batch_size], reduction="sum").backward()
        grads.append(values_of(received).grad.detach())
    return torch.cat(grads)


@dataclass(frozen=True)
class TargetSplit:
    """Which members are attacked (``targets``) and which remain for white-box training."""

    targets: ArraySplit
    rest: ArraySplit
    target_owner: Tensor  # client index that holds each target
    rest_owner: Tensor


def split_targets(data: CarvedData, client_indices: list[Tensor], n_targets: int) -> TargetSplit:
    """A fixed (seeded) choice of ``n_targets`` members to attack; the other members are the rest."""
    owner = torch.empty(len(data.members), dtype=torch.long)
    for client, idx in enumerate(client_indices):
        owner[idx] = client
    order = torch.randperm(len(data.members), generator=torch.Generator().manual_seed(CARVE_SEED))
    cut = min(n_targets, len(order))
    # Keep stored order within each part: probes such as HAR re-identification split by time.
    chosen, rest = order[:cut].sort().values, order[cut:].sort().values
    return TargetSplit(data.members.take(chosen), data.members.take(rest), owner[chosen], owner[rest])


def _observe(model: SplitModel, split: ArraySplit, owners: Tensor, with_grads: bool) -> tuple[Payload, Tensor | None]:
    """Payloads (and gradients) of a split, each sample through the head of the client that owns it."""
    if len(model.heads) == 1:
        payloads = observe_payloads(model, split.x)
        return payloads, observe_gradients(model, payloads, split.y) if with_grads else None
    parts, grads, order = [], [], []
    for client in owners.unique().tolist():
        idx = (owners == client).nonzero().view(-1)
        p = observe_payloads(model, split.x[idx], client)
        parts.append(p)
        if with_grads:
            grads.append(observe_gradients(model, p, split.y[idx], client))
        order.append(idx)
    inverse = torch.argsort(torch.cat(order))
    payloads = take(concat(parts), inverse)
    return payloads, torch.cat(grads)[inverse] if with_grads else None


def build_view(
    *,
    cell: Cell,
    model: SplitModel,
    data: CarvedData,
    client_indices: list[Tensor],
    granted: frozenset[Capability],
    n_targets: int,
    with_targets: bool = True,
) -> tuple[AttackerView, ArraySplit]:
    """The view an attack with ``granted`` capabilities gets, and the targets' truth (kept by bench).

    ``with_targets=False`` gives the view a co-training attack starts from, before training: its
    targets are empty until the trained run's view replaces it.

    Raises:
        ValueError: when ``n_targets`` leaves no member for white-box training.
    """
    split = split_targets(data, client_indices, n_targets)
    grads = Capability.CUT_GRADIENTS in granted
    targets = Observation()
    if with_targets:
        target_payloads, target_grads = _observe(model, split.targets, split.target_owner, grads)
        targets = Observation(payloads=target_payloads, grads=target_grads)
    members = None
    if Capability.MEMBER_INPUTS in granted and with_targets:
        if len(split.rest) == 0:
            raise ValueError("no members left for white-box training after choosing the targets")
        rest_payloads, rest_grads = _observe(model, split.rest, split.rest_owner, grads)
        members = Observation(
            payloads=rest_payloads, grads=rest_grads, inputs=split.rest.x, labels=split.rest.y, groups=split.rest.groups
        )
    aux = None
    if Capability.AUX_DATA in granted or Capability.AUX_QUERIES in granted:
        aux_payloads = observe_payloads(model, data.nonmembers.x) if Capability.AUX_QUERIES in granted else None
        aux = Observation(
            payloads=aux_payloads, inputs=data.nonmembers.x, labels=data.nonmembers.y, groups=data.nonmembers.groups
        )
    view = AttackerView(
        granted=granted,
        kind=data.kind,
        input_shape=data.input_shape,
        num_classes=data.num_classes,
        cut_shape=tuple(model.cut_shape),
        defense_name=cell.defense,
        targets=targets,
        backbone=copy.deepcopy(model.backbone).eval(),
        server_defense=server_copy(model.defense),
        public_state=(
            {k: v.clone() for k, v in model.defense.public_state().items()}
            if Capability.DEFENSE_PUBLIC_STATE in granted else None
        ),
        aux=aux,
        members=members,
        client_factory=client_factory(cell, data) if Capability.CLIENT_ARCHITECTURE in granted else None,
        defense_factory=(
            defense_factory(cell, model.cut_shape) if Capability.DEFENSE_PUBLIC_STATE in granted else None
        ),
    )
    return view, split.targets
