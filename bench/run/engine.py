"""The split-learning engine: U-shaped or vanilla SL, n clients taking turns on one backbone.

Each step crosses the cut the way a real deployment does: the server receives detached copies of
what the client sends, and the client receives detached copies of what the server returns; each
party steps its own optimizer on its own parameters. The channel counts every tensor that crosses.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from attacks.view import ServerHandle, StepView
from bench.profiles import INFERENCE_BATCH_SIZE
from bench.run.channel import DOWN, UP, Channel
from bench.run.device import forked_rng
from bench.run.divergence import check_epoch
from defenses.base import Defense
from defenses.payload import Payload, as_vector, cross_to_server, detach, values_of, wire_tensors
from defenses.wcc import within_class_scatter
from victims.base import Victim

if TYPE_CHECKING:
    from attacks.base import ActiveAttack, CotrainAttack

PROTOCOLS = ("ushaped", "vanilla")
HEAD_OWNERSHIP = ("sch", "pch")


def task_loss(logits: Tensor, y: Tensor, *, reduction: str = "mean") -> Tensor:
    """Cross-entropy of class logits ``(B, C)`` against ``(B,)``, or of next-token logits ``(B, T, V)``
    against ``(B, T)`` (every token counts once), reduced as ``F.cross_entropy`` does."""
    return F.cross_entropy(logits.flatten(0, -2), y.flatten(), reduction=reduction)


class SplitModel(nn.Module):
    """All trained state of one victim cell: heads, tails, the backbone and the defense.

    With shared heads (SCH) there is one head and one tail used by every client; with per-client
    heads (PCH) client ``i`` owns ``heads[i]`` (and ``tails[i]`` in U-shaped SL). In vanilla SL the
    tail belongs to the server and is shared.
    """

    def __init__(
        self,
        *,
        victim: Victim,
        cut: str,
        num_classes: int,
        input_shape: tuple[int, ...],
        defense: Defense,
        protocol: str,
        heads: str,
        clients: int,
    ) -> None:
        super().__init__()
        if protocol not in PROTOCOLS:
            raise ValueError(f"unknown protocol '{protocol}' (known: {', '.join(PROTOCOLS)})")
        if heads not in HEAD_OWNERSHIP:
            raise ValueError(f"unknown head ownership '{heads}' (known: {', '.join(HEAD_OWNERSHIP)})")
        n_heads = clients if heads == "pch" else 1
        parts = [victim.build(cut=cut, num_classes=num_classes, input_shape=input_shape) for _ in range(n_heads)]
        self.protocol, self.head_ownership, self.clients = protocol, heads, clients
        self.cut_shape = parts[0].cut_shape
        self.init = parts[0].init
        self.heads = nn.ModuleList(p.head for p in parts)
        self.backbone = parts[0].backbone
        n_tails = n_heads if protocol == "ushaped" else 1
        self.tails = nn.ModuleList(p.tail for p in parts[:n_tails])
        self.defense = defense

    def head_of(self, client: int) -> nn.Module:
        return self.heads[client if len(self.heads) > 1 else 0]

    def tail_of(self, client: int) -> nn.Module:
        return self.tails[client if len(self.tails) > 1 else 0]

    def forward(self, x: Tensor, client: int = 0) -> Tensor:
        """Logits of the whole pipeline for ``client`` (no channel, no gradient hop)."""
        payload = self.defense.encode(self.head_of(client)(x))
        return self.tail_of(client)(self.backbone(self.defense.decode(payload)))


class SplitTrainer:
    """Trains a :class:`SplitModel` with one optimizer per party.

    Args:
        model: the split model.
        lr: Adam learning rate of every party.
        client_lr: Adam learning rate of the client's head and of the defense's client half, where it
            differs from ``lr`` (a hijacked run: :attr:`attacks.base.ActiveAttack.hijacked_client_lr`).
        lambda_wcc: weight of the within-class compaction loss on the payload (client side).
        observers: co-training attacks (anything with ``on_step``), called with a
            :class:`~attacks.view.StepView` after every step.
        active: an active attack (anything with ``client_gradient``) that replaces the gradient the
            client receives (``None``: an honest server).
    """

    def __init__(
        self,
        *,
        model: SplitModel,
        lr: float,
        client_lr: float | None = None,
        lambda_wcc: float = 0.0,
        observers: Iterable[CotrainAttack] = (),
        active: ActiveAttack | None = None,
    ) -> None:
        if lambda_wcc < 0:
            raise ValueError(f"lambda_wcc must be >= 0, got {lambda_wcc}")
        self.model = model
        self.lambda_wcc = lambda_wcc
        self.observers = list(observers)
        self.active = active
        self.server_handle = ServerHandle(model.backbone, model.defense.server_half())
        self.channel = Channel()
        self.step_count = 0
        self.epoch = 0
        ushaped = model.protocol == "ushaped"
        client_lr = lr if client_lr is None else client_lr
        self.client_optimizers = [
            torch.optim.Adam(
                list(model.heads[i].parameters()) + (list(model.tails[i].parameters()) if ushaped else []),
                lr=client_lr,
            )
            for i in range(len(model.heads))
        ]
        defense_client = model.defense.client_parameters()
        self.defense_client_optimizer = torch.optim.Adam(defense_client, lr=client_lr) if defense_client else None
        server_params = list(model.backbone.parameters()) + model.defense.server_parameters()
        if not ushaped:
            server_params += list(model.tails[0].parameters())
        self.server_optimizer = torch.optim.Adam(server_params, lr=lr)
        proxy = model.defense.proxy_parameters()
        # The client's proxy adversary (DISCO, ResSFL) at the client's rate, stepped on its own loss only.
        self.proxy_optimizer = torch.optim.Adam(proxy, lr=client_lr) if proxy else None

    def _optimizers(self) -> list[torch.optim.Optimizer]:
        extra = (self.defense_client_optimizer, self.server_optimizer, self.proxy_optimizer)
        return self.client_optimizers + [opt for opt in extra if opt is not None]

    def progress_state(self) -> dict:
        """The run's own state between epochs: the model's tensors, every optimizer's state, the bytes
        counted so far and the step and epoch counts (:mod:`bench.run.progress` saves it at once)."""
        return {
            "model": self.model.state_dict(), "optimizers": [opt.state_dict() for opt in self._optimizers()],
            "channel": (dict(self.channel.bytes), self.channel.samples), "counts": (self.step_count, self.epoch),
        }

    def load_progress_state(self, state: dict) -> None:
        """Take back a :meth:`progress_state` of a run of the same cell."""
        self.model.load_state_dict(state["model"])
        for opt, saved in zip(self._optimizers(), state["optimizers"], strict=True):
            opt.load_state_dict(saved)
        counted, self.channel.samples = state["channel"]
        self.channel.bytes.clear()
        self.channel.bytes.update(counted)
        self.step_count, self.epoch = state["counts"]

    def _client_optimizers(self, client: int) -> list[torch.optim.Optimizer]:
        own = self.client_optimizers[client if len(self.client_optimizers) > 1 else 0]
        return [own] + ([self.defense_client_optimizer] if self.defense_client_optimizer else [])

    def step(self, client: int, x: Tensor, y: Tensor) -> Tensor:
        """One training step of ``client`` on a batch; returns the task loss, detached, where it was
        computed (reading it is a host sync: :meth:`train_epoch` reads an epoch's losses at once)."""
        model, channel = self.model, self.channel
        client_opts = self._client_optimizers(client)
        for opt in client_opts + [self.server_optimizer]:
            opt.zero_grad(set_to_none=True)

        # client: head and defense encoder
        payload = model.defense.encode(model.head_of(client)(x))
        channel.send("cut", UP, *wire_tensors(payload))
        # server: decode and backbone
        received = cross_to_server(payload)
        features = model.backbone(model.defense.decode(received))
        if model.protocol == "ushaped":
            channel.send("tail", DOWN, features)
            returned = features.detach().requires_grad_(True)
            loss = task_loss(model.tail_of(client)(returned), y)
            loss.backward()
            channel.send("tail", UP, returned.grad)
            features.backward(returned.grad)
            labels_seen = None
        else:
            channel.send("cut", UP, y)
            loss = task_loss(model.tails[0](features), y)
            loss.backward()
            labels_seen = y
        grad = values_of(received).grad
        view = None
        if self.observers or self.active is not None:
            tail_grad = returned.grad.detach().clone() if model.protocol == "ushaped" else None
            view = StepView(
                self.step_count, self.epoch, client, detach(received), grad.detach().clone(), labels_seen,
                self.server_handle, tail_grad,
            )
        if self.active is not None:
            grad = self.active.client_gradient(view).detach()
        channel.send("cut", DOWN, grad)
        # client: backward through the encoder and head with the returned gradient + local losses
        local = model.defense.client_loss(payload, y, inputs=x)
        if self.lambda_wcc > 0:
            local = local + self.lambda_wcc * within_class_scatter(as_vector(payload), y)
        tensors, grads = [values_of(payload)], [grad]
        if local.requires_grad:
            tensors.append(local)
            grads.append(torch.ones_like(local))
        torch.autograd.backward(tensors, grads)
        for opt in client_opts + [self.server_optimizer]:
            opt.step()
        if self.proxy_optimizer is not None:
            self._proxy_step(detach(payload), x)
        # Observers run after both parties stepped, in a forked RNG state: whatever they compute or
        # draw cannot reach this step's updates or the victim's later randomness.
        for observer in self.observers:
            with forked_rng():
                observer.on_step(view)
        channel.count_samples(len(y))
        self.step_count += 1
        # Did the loss, payload and returned gradient stay finite? One fused flag, read by train_epoch with
        # the losses; a sum is a NaN or inf when any term is (or past float range: diverged all the same).
        self.finite = torch.isfinite(loss.detach() + values_of(received).detach().sum() + grad.sum())
        return loss.detach()

    def _proxy_step(self, payload: Payload, x: Tensor) -> None:
        """One step of the client's proxy adversary on this step's (detached) payload; the stray
        gradient the client's loss left on it is dropped first."""
        self.proxy_optimizer.zero_grad(set_to_none=True)
        self.model.defense.proxy_loss(payload, x).backward()
        self.proxy_optimizer.step()

    def train_epoch(self, loaders: Sequence[Iterable[tuple[Tensor, Tensor]]]) -> float:
        """Clients take turns in order, each running once through its own data; returns the mean loss.

        Raises:
            bench.run.divergence.TrainingDiverged: a step's loss, payload or returned gradient was not
                finite (found at the epoch's end, with the first such step).
        """
        self.model.train()
        losses, finite, first_step = [], [], self.step_count
        for client, loader in enumerate(loaders):
            for x, y in loader:
                losses.append(self.step(client, x, y))
                finite.append(self.finite)
        self.epoch += 1
        if not losses:
            return 0.0
        values, healthy = torch.stack([torch.stack(losses).float(), torch.stack(finite).float()]).tolist()  # one host sync an epoch
        check_epoch(healthy, first_step=first_step, epoch=self.epoch - 1)
        return sum(values) / len(values)


@torch.no_grad()
def accuracy(model: SplitModel, x: Tensor, y: Tensor, *, batch_size: int = INFERENCE_BATCH_SIZE) -> float:
    """Top-1 accuracy on ``(x, y)``, averaged over the clients' models (one model under SCH).

    The defense runs in evaluation mode, so DP noise is applied here too.
    """
    model.eval()
    owners = range(len(model.heads)) if len(model.heads) > 1 else [0]
    scores = []
    for client in owners:
        correct = torch.zeros((), dtype=torch.long, device=y.device)
        for start in range(0, len(y), batch_size):
            logits = model(x[start : start + batch_size], client)
            correct += (logits.argmax(1) == y[start : start + batch_size]).sum()
        scores.append(int(correct) / len(y))
    return sum(scores) / len(scores)
