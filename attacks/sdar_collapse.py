"""How SDAR watches its own adversarial game: when a run has collapsed, and when its critic has won.

The attacker reads only its own losses and accuracies here, so these rules are what a real server
running SDAR could apply as it goes.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from torch import Tensor, nn

CHANCE_FRACTION = 0.25  # a tail accuracy under a quarter of chance is a learned label permutation
CRITIC_FLOOR = 0.1  # e_dis loss (sum of two BCEs; 2·ln 2 ≈ 1.39 when it cannot tell) under which the critic won
# Windows after a critic restart during which a run is not yet judged healthy: a fresh critic beat raw
# MNIST seed 0's simulator at ×16 within 9 windows of 50 iterations (benchmarks/sdar_critic_restart.py).
RESTART_GRACE_WINDOWS = 10


def critic_won(e_dis_losses: Sequence[float]) -> bool:
    """Whether the payload critic won over these iterations: its mean loss is under ``CRITIC_FLOOR``."""
    return bool(e_dis_losses) and sum(e_dis_losses) / len(e_dis_losses) < CRITIC_FLOOR


def sdar_diverged(
    e_dis_losses: Sequence[float], label_accs: Sequence[float], num_classes: int, *, window: int = 50
) -> bool:
    """Whether an SDAR run collapsed (research notes §7, the released ``plainnet_l7_unstable`` log).

    Diverged when any recorded value is not finite; or the simulated tail's accuracy over the last
    ``window`` steps is below ``CHANCE_FRACTION`` of chance (a consistent label permutation); or the
    critic won over the last window (:func:`critic_won`). The defense, DP noise included, sits
    identically on the simulator's path and the client's, so a critic that tells them apart outright
    means the simulator left the payload distribution, and the decoder trained on its maps reads the
    client's payloads off-distribution, however well the simulated task goes: SDAR on raw MNIST at
    ×16 the cpu budget ended with e_dis loss 3e-6, a tail accuracy of 0.98 and SSIM 0.17, against
    0.96 at ×4 (results/issue12-convergence).
    """
    if not all(math.isfinite(v) for v in (*e_dis_losses, *label_accs)):
        return True
    if not e_dis_losses or not label_accs:
        return False
    w = max(1, min(window, len(label_accs)))
    if sum(label_accs[-w:]) / w < CHANCE_FRACTION / num_classes:
        return True
    return critic_won(e_dis_losses[-w:])


class GameWatch:
    """What SDAR keeps from watching its game window by window: when it replaced its critic, and the
    networks of its last healthy window (what a run that ends collapsed is decoded with).

    Args:
        window: iterations per window.
        num_classes: classes of the simulated task (for the label-permutation rule).
    """

    def __init__(self, *, window: int, num_classes: int) -> None:
        self.window, self.num_classes = window, num_classes
        self.critic_restarts: list[int] = []  # iterations after which e_dis was replaced
        self.healthy: tuple[int, dict[str, dict[str, Tensor]]] | None = None  # (iterations, networks' states)

    def critic_won(self, e_dis_losses: Sequence[float]) -> bool:
        """Whether the critic won the last window."""
        return critic_won(e_dis_losses[-self.window:])

    def within_grace(self, iterations: int) -> bool:
        """Whether the critic was replaced so recently that the simulator has not yet faced it long."""
        return bool(self.critic_restarts) and iterations - self.critic_restarts[-1] < RESTART_GRACE_WINDOWS * self.window

    def collapsed(self, e_dis_losses: Sequence[float], label_accs: Sequence[float]) -> bool:
        """Whether the run, as it stands, has collapsed (:func:`sdar_diverged`) or is still in a grace."""
        return (sdar_diverged(e_dis_losses, label_accs, self.num_classes, window=self.window)
                or self.within_grace(len(e_dis_losses)))

    def keep_if_healthy(self, e_dis_losses: Sequence[float], label_accs: Sequence[float],
                        networks: Mapping[str, nn.Module]) -> None:
        """Snapshot ``networks`` unless the last window collapsed or lies within a restart's grace."""
        w = self.window
        window_collapsed = sdar_diverged(e_dis_losses[-w:], label_accs[-w:], self.num_classes, window=w)
        if not window_collapsed and not self.within_grace(len(e_dis_losses)):
            self.healthy = (len(e_dis_losses), {name: {k: v.detach().clone() for k, v in net.state_dict().items()}
                                                for name, net in networks.items()})
