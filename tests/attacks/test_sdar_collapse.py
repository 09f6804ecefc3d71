import math

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


def test_a_collapsed_window_calls_for_a_restart_until_none_is_left():
    from attacks.sdar_collapse import GameWatch

    watch = GameWatch(window=4, num_classes=10, max_restarts=2)
    healthy, won = ([1.3] * 4, [0.5] * 4), ([0.0] * 4, [0.9] * 4)
    assert not watch.restart_due(4, *healthy) and watch.restarts == []
    assert watch.restart_due(8, *won) and watch.restarts == [8]
    assert not watch.restart_due(12, *healthy)
    assert watch.restart_due(16, [1.3] * 4, [0.001] * 4)  # a label permutation collapses too
    assert watch.restarts == [8, 16]
    assert not watch.restart_due(20, *won) and watch.restarts == [8, 16]  # none left
