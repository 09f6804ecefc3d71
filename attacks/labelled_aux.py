"""What the label attacks read from the view: the targets' tail gradients, and a seeded, class-balanced
choice of the server's own labelled auxiliary samples (with their tail gradients where granted)."""
from __future__ import annotations

import torch
from torch import Tensor

from attacks.view import AttackerView


def class_ranks(labels: Tensor, generator: torch.Generator) -> tuple[Tensor, Tensor]:
    """A seeded order of the samples and, for each in that order, its rank within its class (the
    first sample of a class in the order has rank 0)."""
    order = torch.randperm(len(labels), generator=generator, device=generator.device).cpu()
    ordered = labels.detach().cpu()[order]
    rank = torch.empty_like(ordered)
    for c in ordered.unique():
        mine = ordered == c
        rank[mine] = torch.arange(int(mine.sum()), device=rank.device)
    return order, rank


def balanced_pick(labels: Tensor, count: int, generator: torch.Generator) -> Tensor:
    """Indices of ``count`` samples (all of them if fewer) spread over the classes as evenly as the
    labels allow: in a seeded order, each class's first sample, then each class's second, and so on."""
    order, rank = class_ranks(labels, generator)
    return order[torch.argsort(rank, stable=True)[:count]].to(labels.device)


def per_class_pick(labels: Tensor, per_class: int, generator: torch.Generator) -> Tensor:
    """Indices of at most ``per_class`` samples of each class, chosen in a seeded order."""
    order, rank = class_ranks(labels, generator)
    return order[rank < per_class].to(labels.device)


def target_tail_gradients(view: AttackerView, attack: str) -> Tensor:
    """The targets' tail gradients, one flat row per target.

    Raises:
        ValueError: the view holds none (no targets, or tail gradients not granted).
    """
    grads = view.targets.tail_grads
    if grads is None or len(grads) == 0:
        raise ValueError(f"{attack}: the view holds no tail gradients of the targets")
    return grads.flatten(1).float()


def aux_tail_gradients(view: AttackerView, attack: str) -> tuple[Tensor, Tensor]:
    """The labelled aux samples' tail gradients (one flat row each) and their labels.

    Raises:
        ValueError: the view holds no aux tail gradients or labels.
    """
    aux = view.aux
    if aux is None or aux.tail_grads is None or aux.labels is None or len(aux.labels) == 0:
        raise ValueError(f"{attack}: the view holds no labelled aux samples with tail gradients")
    return aux.tail_grads.flatten(1).float(), aux.labels
