import math

import torch

from attacks.sdar_collapse import CRITIC_FLOOR, critic_won, sdar_diverged


def test_divergence_on_a_forced_collapse_and_not_on_healthy_runs():
    n = 200
    healthy_acc = [0.1 + 0.8 * i / n for i in range(n)]
    collapsed_critic = [1.4 * math.exp(-i / 20) + 0.02 for i in range(n)]  # → 0.02: the critic wins
    assert not sdar_diverged([1.3] * n, healthy_acc, 10)
    assert sdar_diverged(collapsed_critic, [0.1] * n, 10)  # critic wins, simulator stuck at chance
    assert sdar_diverged([1.3] * n, [0.1] * 50 + [0.002] * 150, 10)  # tail learned a label permutation
    # The ×16 collapse on raw MNIST: the critic wins outright while the simulated task keeps improving.
    assert sdar_diverged(collapsed_critic, healthy_acc, 10)
    assert not sdar_diverged([0.3] * n, healthy_acc, 10)  # a critic ahead but not winning (×1 on raw: 0.32)
    assert sdar_diverged([1.3, float("nan")], [0.5, 0.5], 10)
    assert not sdar_diverged([], [], 10)


def test_the_critic_won_when_its_mean_loss_is_under_the_floor():
    assert critic_won([0.0] * 50)
    assert critic_won([CRITIC_FLOOR - 0.01] * 10)
    assert not critic_won([CRITIC_FLOOR + 1e-6] * 10)  # just above the floor: not yet won
    assert not critic_won([0.0] * 9 + [1.3])  # one healthy iteration in ten lifts the mean to 0.13
    assert not critic_won([])


HEALTHY, WON = ([1.3] * 4, [0.5] * 4), ([0.0] * 4, [0.9] * 4)


def test_every_collapsed_window_calls_for_a_restart():
    from attacks.sdar_collapse import GameWatch

    watch = GameWatch(window=4, num_classes=10)
    assert not watch.restart_due(4, *HEALTHY) and watch.restarts == []
    assert watch.restart_due(8, *WON) and watch.restarts == [8] and watch.attacker_started == 8
    assert not watch.restart_due(12, *HEALTHY)
    assert watch.restart_due(16, [1.3] * 4, [0.001] * 4)  # a label permutation collapses too
    for n in range(20, 60, 4):  # no cap: a collapse late in the budget restarts as well
        assert watch.restart_due(n, *WON)
    assert watch.restarts == [8, 16, *range(20, 60, 4)]


def snapshot(tag: float) -> dict:
    net = torch.nn.Linear(1, 1, bias=False)
    torch.nn.init.constant_(net.weight, tag)
    return {"e": net}


def history(*windows):
    """The per-iteration (e_dis, label_acc) lists of these windows, one after the other."""
    return [v for w in windows for v in w[0]], [v for w in windows for v in w[1]]


def play(watch, windows):
    """Feed ``windows`` to ``watch`` as SDAR does at each window end; each snapshot is tagged by its iterations."""
    for i in range(len(windows)):
        n = 4 * (i + 1)
        if not watch.restart_due(n, *windows[i]):
            watch.keep_if_healthy(n, *windows[i], snapshot(float(n)))
    return watch.decoding(*history(*windows))


def test_a_run_that_ends_healthy_on_an_attacker_with_a_healthy_window_decodes_with_its_final_networks():
    from attacks.sdar_collapse import GameWatch

    assert play(GameWatch(window=4, num_classes=10), [HEALTHY] * 5) is None
    # A long first attacker, then a shorter one that lives to the end: still the final networks.
    assert play(GameWatch(window=4, num_classes=10), [HEALTHY, HEALTHY, HEALTHY, WON, HEALTHY]) is None
    assert play(GameWatch(window=4, num_classes=10), []) is None  # no window yet: nothing else to decode with


def test_a_run_that_ends_collapsed_or_on_a_fresh_attacker_decodes_with_its_last_healthy_window():
    from attacks.sdar_collapse import GameWatch

    kept = play(GameWatch(window=4, num_classes=10), [HEALTHY, HEALTHY, WON, HEALTHY, WON])
    assert kept is not None and kept[0] == 16 and kept[1]["e"]["weight"].item() == 16.0
    # The last window collapsed and a fresh attacker ran a few iterations more: the run's tail reads
    # healthy, but the fresh attacker has no healthy window, so the last snapshot decodes.
    watch = GameWatch(window=4, num_classes=10)
    play(watch, [HEALTHY, HEALTHY, WON])
    e_dis, acc = history(HEALTHY, HEALTHY, WON)
    assert not watch.collapsed(e_dis + [1.3] * 3, acc + [0.5] * 3)
    assert watch.decoding(e_dis + [1.3] * 3, acc + [0.5] * 3)[0] == 8
    assert play(GameWatch(window=4, num_classes=10), [WON, WON]) is None  # no healthy window at all
