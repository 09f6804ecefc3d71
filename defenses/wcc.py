"""Within-Class Compaction (WCC): the within-class scatter of the payload around batch centroids."""
from __future__ import annotations

import torch
from torch import Tensor


def within_class_scatter(payload: Tensor, labels: Tensor) -> Tensor:
    """Mean over the batch's classes of the mean squared distance of each payload to its class centroid.

    ``L_WCC = 1/|Y_b| Σ_{c∈Y_b} 1/|S_c| Σ_{i∈S_c} ‖z̃_i − μ_c‖²`` with ``μ_c`` the batch centroid of class
    ``c``. It is computed on the client with labels that never leave it.

    Paper: LightSplit (arXiv:2605.13265), Sect. IV-D.

    Args:
        payload: ``(B, ...)`` transmitted payload (flattened per sample).
        labels: ``(B,)`` integer class labels.
    """
    flat = payload.flatten(1)
    classes, inverse, counts = torch.unique(labels, return_inverse=True, return_counts=True)
    sums = flat.new_zeros(len(classes), flat.shape[1]).index_add(0, inverse, flat)
    centroids = sums / counts.unsqueeze(1).to(flat.dtype)
    sq_dist = (flat - centroids[inverse]).pow(2).sum(dim=1)
    per_class = flat.new_zeros(len(classes)).index_add(0, inverse, sq_dist) / counts.to(flat.dtype)
    return per_class.mean()
