import torch

from defenses.wcc import within_class_scatter


def test_zero_when_every_class_is_a_single_point():
    prototypes = torch.randn(3, 20)
    labels = torch.tensor([0, 1, 2, 0, 1, 2, 2])
    assert abs(within_class_scatter(prototypes[labels], labels).item()) < 1e-10


def test_grows_quadratically_with_within_class_spread():
    torch.manual_seed(0)
    labels = torch.randint(0, 4, (64,))
    centers = torch.randn(4, 10)[labels]
    noise = torch.randn(64, 10)
    small = within_class_scatter(centers + 0.1 * noise, labels)
    large = within_class_scatter(centers + 0.2 * noise, labels)
    assert small > 0 and torch.isclose(large, 4 * small, rtol=1e-4)


def test_matches_a_slow_reference():
    torch.manual_seed(1)
    z, y = torch.randn(30, 7), torch.randint(0, 5, (30,))
    per_class = []
    for c in y.unique():
        members = z[y == c]
        per_class.append(((members - members.mean(0)) ** 2).sum(1).mean())
    assert torch.isclose(within_class_scatter(z, y), torch.stack(per_class).mean())


def test_ignores_between_class_distance():
    labels = torch.tensor([0, 0, 1, 1])
    z = torch.tensor([[0.0, 1.0], [0.0, -1.0], [5.0, 1.0], [5.0, -1.0]])
    far = z.clone()
    far[2:, 0] += 100
    assert torch.isclose(within_class_scatter(z, labels), within_class_scatter(far, labels))
