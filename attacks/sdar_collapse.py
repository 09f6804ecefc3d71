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


def cloned_states(networks: Mapping[str, nn.Module]) -> dict[str, dict[str, Tensor]]:
    """Each network's state, detached and copied (a snapshot later training leaves as it is)."""
    return {name: {k: v.detach().clone() for k, v in net.state_dict().items()} for name, net in networks.items()}


class GameWatch:
    """What SDAR keeps from watching its game window by window: when to start afresh, and which
    networks decode the targets.

    Every window that shows a collapse starts a fresh attacker (:meth:`restart_due`): every network
    and optimizer anew from a new seed, the rest of the budget still to run. The release's authors
    advise another seed for an unstable run, and the collapse follows the attacker's seed: on raw
    MNIST at ×16, on the victim of seed 0, attacker seed 0's critic wins by iteration 500 (SSIM 0.242
    from its early snapshot) and attacker seed 1 never collapses (SSIM 0.985;
    ``benchmarks/sdar_attacker_seed.py``). Restarts are not capped: a cap of 3 spent them all by
    iteration 3,100 of 15,040 on DISCO seed 1 (tied), whose fourth attacker's critic then won 223 of
    its 238 windows (SSIM 0.354 from a one-window blip); uncapped, its seventh attacker (from 5,150)
    never collapsed and decoded at 0.963 (``benchmarks/RESULTS.md``, "The game watch without a cap
    on restarts").

    The targets are decoded with the final networks when the run ends healthy and its last attacker
    has a healthy window of its own, else with the networks of the last healthy window
    (:meth:`decoding`), so a fresh attacker started in the budget's last window never decodes.
    Decoding instead with the attacker that went longest without a collapse was measured and
    dropped: on MID λ 0.1 seed 2 that is an early attacker (to iteration 4,800), at SSIM 0.105,
    against 0.160 from the last one, which lived 3,190 iterations to the end; on MID λ 0.1 seed 0
    (nine attackers) the two rules read 0.142 and 0.139, on DISCO seed 1 both 0.963. The window whose
    simulator lay nearest the payloads (MK-MMD) is no rule either: on MID λ 0.1 seed 0 it is a fresh
    simulator's, at SSIM 0.006.

    Replacing a critic that won outright by a fresh one was measured and dropped: on raw MNIST at
    ×16 seed 0 the critic won again 31 times in 15,040 iterations, the simulator stayed off the
    payload distribution (MK-MMD 1.02 against a floor of 0.01) and SSIM fell to the floor, 0.119,
    against 0.242 with the early snapshot alone (results/issue39-sdar-restart).

    Args:
        window: iterations per window.
        num_classes: classes of the simulated task (for the label-permutation rule).
    """

    def __init__(self, *, window: int, num_classes: int) -> None:
        self.window, self.num_classes = window, num_classes
        self.healthy: tuple[int, dict[str, dict[str, Tensor]]] | None = None  # (iterations, networks' states)
        self.restarts: list[int] = []  # iterations after which a fresh attacker started

    @property
    def attacker_started(self) -> int:
        """Iterations before the current attacker began."""
        return self.restarts[-1] if self.restarts else 0

    def restart_due(self, iterations: int, e_dis_window: Sequence[float], label_acc_window: Sequence[float]) -> bool:
        """Whether the window ending after ``iterations`` collapsed; if so, the restart is counted."""
        if not self.collapsed(e_dis_window, label_acc_window):
            return False
        self.restarts.append(iterations)
        return True

    def collapsed(self, e_dis_losses: Sequence[float], label_accs: Sequence[float]) -> bool:
        """Whether the run, as it stands, has collapsed (:func:`sdar_diverged` on its last window)."""
        return sdar_diverged(e_dis_losses, label_accs, self.num_classes, window=self.window)

    def keep_if_healthy(self, iterations: int, e_dis_window: Sequence[float], label_acc_window: Sequence[float],
                        networks: Mapping[str, nn.Module]) -> None:
        """Snapshot ``networks`` (after ``iterations``) unless the window's values show a collapse."""
        if not self.collapsed(e_dis_window, label_acc_window):
            self.healthy = (iterations, cloned_states(networks))

    def decoding(self, e_dis_losses: Sequence[float], label_accs: Sequence[float]) -> tuple[int, dict] | None:
        """The snapshot to decode with after these iterations' values, or ``None`` for the current
        networks: those when the run ends healthy and the last snapshot is the current attacker's
        (or none was kept), the last snapshot otherwise."""
        ends_healthy = not self.collapsed(e_dis_losses, label_accs)
        if self.healthy is None or (ends_healthy and self.healthy[0] > self.attacker_started):
            return None
        return self.healthy
