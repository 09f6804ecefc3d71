import torch

from bench.data.splits import carve, partition
from bench.data.types import ArraySplit, RawDataset
from bench.profiles import Profile


def raw_dataset(n=1000, with_train=False):
    g = torch.Generator().manual_seed(0)
    split = lambda m: ArraySplit(torch.arange(m, dtype=torch.float32).view(m, 1), torch.randint(0, 10, (m,), generator=g))
    return RawDataset("toy", 10, "tabular", test=split(n), train=split(3 * n) if with_train else None)


PROFILE = Profile(name="t", members=600, nonmembers=200, test=200, epochs=1, batch_size=8)


def test_test_only_data_is_carved_into_disjoint_stratified_splits():
    carved = carve(raw_dataset(), PROFILE)
    ids = [set(s.x.view(-1).tolist()) for s in (carved.members, carved.nonmembers, carved.test)]
    assert [len(s) for s in ids] == [600, 200, 200]
    assert not (ids[0] & ids[1]) and not (ids[0] & ids[2]) and not (ids[1] & ids[2])
    member_share = torch.bincount(carved.members.y, minlength=10) / 600
    all_share = torch.bincount(raw_dataset().test.y, minlength=10) / 1000
    assert (member_share - all_share).abs().max() < 0.01


def test_carving_is_deterministic():
    a, b = carve(raw_dataset(), PROFILE), carve(raw_dataset(), PROFILE)
    assert torch.equal(a.members.x, b.members.x) and torch.equal(a.test.x, b.test.x)


def test_with_a_train_split_members_come_from_train_and_test_from_test():
    carved = carve(raw_dataset(with_train=True), PROFILE)
    assert len(carved.members) == 600 and len(carved.test) == 200
    assert not set(carved.members.x.view(-1).tolist()) & set(carved.nonmembers.x.view(-1).tolist())


def test_a_training_split_smaller_than_the_profile_keeps_its_ratio_and_every_sample():
    small = raw_dataset(n=247, with_train=True)  # 741 training rows for 600 + 200 wanted
    carved = carve(small, PROFILE)
    assert len(carved.members) + len(carved.nonmembers) == 741
    assert len(carved.members) == int(600 * 741 / 800)
    assert not set(carved.members.x.view(-1).tolist()) & set(carved.nonmembers.x.view(-1).tolist())


def test_iid_partition_covers_every_sample_once():
    labels = torch.randint(0, 10, (103,))
    parts = partition(labels, clients=4, scheme="iid", alpha=None, seed=1)
    assert sorted(torch.cat(parts).tolist()) == list(range(103))
    assert max(len(p) for p in parts) - min(len(p) for p in parts) <= 1


def test_dirichlet_small_alpha_skews_labels_and_covers_everything():
    labels = torch.arange(1000) % 10
    parts = partition(labels, clients=5, scheme="dirichlet", alpha=0.1, seed=0)
    assert sorted(torch.cat(parts).tolist()) == list(range(1000))
    shares = torch.stack([torch.bincount(labels[p], minlength=10) / len(p) for p in parts])
    iid = torch.stack([torch.bincount(labels[p], minlength=10) / len(p)
                       for p in partition(labels, clients=5, scheme="iid", alpha=None, seed=0)])
    assert shares.max() > 0.4 and iid.max() < 0.2


def test_a_profile_larger_than_the_data_is_scaled_down_proportionally():
    big = Profile(name="t", members=6000, nonmembers=2000, test=2000, epochs=1, batch_size=8)
    carved = carve(raw_dataset(1797), big)
    sizes = [len(carved.members), len(carved.nonmembers), len(carved.test)]
    assert sum(sizes) == 1797 and sizes[0] == int(6000 * 1797 / 10000)


def test_the_paper_profile_keeps_non_members_when_a_train_split_exists():
    from bench.data.splits import NONMEMBER_SHARE
    from bench.profiles import get_profile

    raw = raw_dataset(200, with_train=True)
    carved = carve(raw, get_profile("paper"))
    assert len(carved.nonmembers) == int(NONMEMBER_SHARE * 600) > 0
    assert len(carved.members) + len(carved.nonmembers) == 600 and len(carved.test) == 200
    assert not set(carved.members.x.view(-1).tolist()) & set(carved.nonmembers.x.view(-1).tolist())
