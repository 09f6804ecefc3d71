"""Build an attacker's view from a trained victim: the one place that touches the client for an attack.

Everything handed over is a copy computed here; the view keeps no reference to the client's head,
tail or private inputs (see :mod:`attacks.view`).
"""
from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, replace

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from attacks.base import MissingCapabilityError
from attacks.view import AttackerClientPath, AttackerView, Capability, ClientPath, Observation
from bench.data.splits import CARVE_SEED, CarvedData
from bench.data.types import ArraySplit
from bench.profiles import INFERENCE_BATCH_SIZE
from bench.run.cell import Cell
from bench.run.device import seeded_permutation
from bench.run.engine import SplitModel, task_loss
from defenses import build_defense
from defenses.base import Defense
from defenses.payload import Payload, concat, cross_to_server, per_sample, samples_of, take, values_of
from victims import VICTIMS


def server_copy(defense: Defense) -> Defense:
    """A deep copy of ``defense`` with every client half removed (what the server itself runs)."""
    clone = copy.deepcopy(defense)
    for module in clone.modules():
        if isinstance(module, Defense):
            module.client_side = nn.Module()
    return clone.eval()


def client_factory(cell: Cell, data: CarvedData, server_state: dict[str, Tensor]) -> Callable[[], AttackerClientPath]:
    """Builds fresh client paths as an attacker simulates them: the victim's head architecture,
    freshly initialised, and the whole defense (payload transforms such as DP noise included) with
    its public state: the same seeded R, the DP clip, and the trained server half, frozen, which
    the server holds anyway. The client half of the defense is fresh too."""
    victim = VICTIMS.get(cell.victim)()
    # Close over plain values only: the closure is reachable from the view, the data is not.
    cut, num_classes, input_shape = cell.cut, data.num_classes, data.input_shape
    build_defense_ = defense_factory(cell, None, server_state, input_shape)

    def build() -> AttackerClientPath:
        parts = victim.build(cut=cut, num_classes=num_classes, input_shape=input_shape)
        return AttackerClientPath(parts.head, build_defense_(parts.cut_shape))

    return build


def defense_factory(
    cell: Cell, cut_shape: tuple[int, ...] | None, server_state: dict[str, Tensor], input_shape: tuple[int, ...]
) -> Callable[..., Defense]:
    """Builds fresh copies of the cell's defense, payload transforms included, carrying the public
    and server-held state of the trained one (``server_state``: R, the DP clip, the server half,
    frozen); the client half is fresh. ``cut_shape`` may be given at call time instead."""
    name, seed, params = cell.defense, cell.seed, cell.defense_params()
    state = {k: v.clone() for k, v in server_state.items()}
    default_shape = tuple(cut_shape) if cut_shape is not None else None

    def build(shape: tuple[int, ...] | None = None) -> Defense:
        defense = build_defense(name, cut_shape=tuple(shape or default_shape), seed=seed, input_shape=input_shape,
                                **params)
        missing = set(state) - set(defense.state_dict())
        if missing:
            raise RuntimeError(f"attacker's defense copy lacks {sorted(missing)}")
        defense.load_state_dict(state, strict=False)
        for module in defense.modules():
            if isinstance(module, Defense):
                module.server_side.requires_grad_(False)
        return defense

    return build


def server_held_state(defense: Defense) -> dict[str, Tensor]:
    """The defense's state the server may copy: everything outside its client halves, plus the
    payload transforms' buffers (the DP clip, public by the accounting's convention)."""
    return {
        name: tensor.detach().clone()
        for name, tensor in defense.state_dict().items()
        if ".client_side." not in f".{name}" or ".client_side.transforms." in f".{name}"
    }


@torch.no_grad()
def observe_payloads(model: SplitModel, x: Tensor, client: int = 0, batch_size: int = INFERENCE_BATCH_SIZE) -> Payload:
    """Payloads of ``x`` through the trained client path of ``client`` (evaluation mode)."""
    model.eval()
    path = ClientPath(model.head_of(client), model.defense)
    return concat([path(x[i : i + batch_size]) for i in range(0, len(x), batch_size)])


def observe_gradients(model: SplitModel, payload: Payload, y: Tensor, client: int = 0,
                      batch_size: int = INFERENCE_BATCH_SIZE) -> Tensor:
    """Per-sample gradient of the task loss with respect to each payload, as the server returns it.

    Uses the summed loss in evaluation mode, so each row is that sample's own gradient. Where one
    payload row stands for several samples (C3-SL), the server returns one gradient per row, the sum
    over the row's samples, and each of them carries it (:func:`~defenses.payload.per_sample`).
    """
    model.eval()
    received = cross_to_server(payload)
    for i in range(0, samples_of(payload), batch_size):
        part = take(received, slice(i, i + batch_size))  # differentiable: the gradient lands on received
        logits = model.tail_of(client)(model.backbone(model.defense.decode(part)))
        F.cross_entropy(logits, y[i : i + batch_size], reduction="sum").backward()
    return per_sample(received, values_of(received).grad.detach())


def observe_tail_gradients(model: SplitModel, payload: Payload, y: Tensor, client: int = 0,
                           batch_size: int = INFERENCE_BATCH_SIZE) -> Tensor:
    """Per-sample gradient the client's tail returns to the server in U-shaped SL: of the task loss
    with respect to the backbone features the server sends down for ``payload`` (labels ``y``, the
    client's), as :meth:`bench.run.engine.SplitTrainer.step` sends it back.

    Uses the summed loss in evaluation mode, so each row is that sample's own gradient (a training
    step's batch-mean loss scales it by one over the batch size). No parameter's gradient is touched.

    Raises:
        MissingCapabilityError: the model is not U-shaped (vanilla SL: the tail is the server's own).
    """
    if model.protocol != "ushaped":
        raise MissingCapabilityError(vanilla_refusal("tail gradients"))
    model.eval()
    parts = []
    for i in range(0, samples_of(payload), batch_size):
        with torch.no_grad():
            features = model.backbone(model.defense.decode(take(payload, slice(i, i + batch_size))))
        features.requires_grad_(True)
        loss = task_loss(model.tail_of(client)(features), y[i : i + batch_size], reduction="sum")
        parts.append(torch.autograd.grad(loss, features)[0].detach())
    return torch.cat(parts)


def vanilla_refusal(what: str) -> str:
    """The one line refusing ``what`` (label attacks, tail gradients) in vanilla split learning."""
    return (f"{what} need U-shaped split learning: in vanilla split learning (protocol 'vanilla') the server "
            "holds the labels and the tail itself")


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
    generator = torch.Generator().manual_seed(CARVE_SEED)
    order = seeded_permutation(len(data.members), generator, device=owner.device)
    cut = min(n_targets, len(order))
    # Keep stored order within each part: probes such as HAR re-identification split by time.
    chosen, rest = order[:cut].sort().values, order[cut:].sort().values
    return TargetSplit(data.members.take(chosen), data.members.take(rest), owner[chosen], owner[rest])


def _observe(model: SplitModel, split: ArraySplit, owners: Tensor, with_grads: bool,
             with_tail_grads: bool = False) -> Observation:
    """Payloads (and cut and tail gradients) of a split, each sample through the head (and tail) of
    the client that owns it."""

    def observe(x: Tensor, y: Tensor, client: int) -> Observation:
        p = observe_payloads(model, x, client)
        return Observation(payloads=p, grads=observe_gradients(model, p, y, client) if with_grads else None,
                           tail_grads=observe_tail_gradients(model, p, y, client) if with_tail_grads else None)

    if len(model.heads) == 1:
        return observe(split.x, split.y, 0)
    parts, order = [], []
    for client in owners.unique().tolist():
        idx = (owners == client).nonzero().view(-1)
        parts.append(observe(split.x[idx], split.y[idx], client))
        order.append(idx)
    inverse = torch.argsort(torch.cat(order))
    stacked = lambda values: torch.cat(values)[inverse] if values[0] is not None else None  # noqa: E731
    return Observation(payloads=take(concat([p.payloads for p in parts]), inverse),
                       grads=stacked([p.grads for p in parts]), tail_grads=stacked([p.tail_grads for p in parts]))


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
        MissingCapabilityError: ``TAIL_GRADIENTS`` granted on a vanilla-SL model (no client tail).
    """
    split = split_targets(data, client_indices, n_targets)
    grads = Capability.CUT_GRADIENTS in granted
    tail_grads = Capability.TAIL_GRADIENTS in granted
    if tail_grads and model.protocol != "ushaped":
        raise MissingCapabilityError(vanilla_refusal("tail gradients"))
    targets = Observation()
    if with_targets:
        targets = _observe(model, split.targets, split.target_owner, grads, tail_grads)
    members = None
    if Capability.MEMBER_INPUTS in granted and with_targets:
        if len(split.rest) == 0:
            raise ValueError("no members left for white-box training after choosing the targets")
        rest = _observe(model, split.rest, split.rest_owner, grads, tail_grads)
        members = replace(rest, inputs=split.rest.x, labels=split.rest.y, groups=split.rest.groups)
    aux = None
    if Capability.AUX_DATA in granted or Capability.AUX_QUERIES in granted:
        queried = Capability.AUX_QUERIES in granted
        aux_payloads = observe_payloads(model, data.nonmembers.x) if queried else None
        aux_tail_grads = (
            observe_tail_gradients(model, aux_payloads, data.nonmembers.y) if queried and tail_grads else None
        )
        aux = Observation(
            payloads=aux_payloads, tail_grads=aux_tail_grads, inputs=data.nonmembers.x, labels=data.nonmembers.y,
            groups=data.nonmembers.groups,
        )
    server_state = server_held_state(model.defense)
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
        client_factory=client_factory(cell, data, server_state) if Capability.CLIENT_ARCHITECTURE in granted else None,
        defense_factory=(
            defense_factory(cell, model.cut_shape, server_state, data.input_shape)
            if Capability.DEFENSE_PUBLIC_STATE in granted else None
        ),
    )
    return view, split.targets
