import pytest
import torch

from attacks.observed_payloads import ObservedPayloads


def ids(n, start=0):
    """Maps whose every element is the sample's id, so a drawn map names the sample it came from."""
    return torch.arange(start, start + n, dtype=torch.float32).view(n, 1, 1, 1).expand(n, 2, 3, 3).clone()


def test_keeps_the_last_capacity_samples_with_their_labels():
    buffer = ObservedPayloads(capacity=5)
    buffer.add(ids(3), torch.arange(3))
    buffer.add(ids(4, start=3), torch.arange(3, 7))
    assert len(buffer) == 5
    maps, labels = buffer.draw(5, torch.Generator().manual_seed(0))
    assert sorted(maps[:, 0, 0, 0].tolist()) == [2, 3, 4, 5, 6]  # 0 and 1 gave way
    assert torch.equal(maps[:, 0, 0, 0].long(), labels)


def test_a_batch_larger_than_the_buffer_keeps_its_tail():
    buffer = ObservedPayloads(capacity=3)
    buffer.add(ids(8), None)
    maps, labels = buffer.draw(3, torch.Generator().manual_seed(0))
    assert labels is None and sorted(maps[:, 0, 0, 0].tolist()) == [5, 6, 7]


def test_draws_are_distinct_samples_and_follow_the_generator():
    buffer = ObservedPayloads(capacity=100)
    buffer.add(ids(100), None)
    a, _ = buffer.draw(50, torch.Generator().manual_seed(1))
    b, _ = buffer.draw(50, torch.Generator().manual_seed(1))
    c, _ = buffer.draw(50, torch.Generator().manual_seed(2))
    assert len(set(a[:, 0, 0, 0].tolist())) == 50
    assert torch.equal(a, b) and not torch.equal(a, c)


def test_more_than_stored_draws_with_replacement():
    buffer = ObservedPayloads(capacity=10)
    buffer.add(ids(2), None)
    maps, _ = buffer.draw(6, torch.Generator().manual_seed(0))
    assert len(maps) == 6 and set(maps[:, 0, 0, 0].tolist()) <= {0.0, 1.0}


def test_bad_use_is_refused():
    with pytest.raises(ValueError, match="capacity"):
        ObservedPayloads(capacity=0)
    buffer = ObservedPayloads(capacity=4)
    with pytest.raises(ValueError, match="nothing observed"):
        buffer.draw(1, torch.Generator())
    buffer.add(ids(2), torch.arange(2))
    with pytest.raises(ValueError, match="does not fit"):
        buffer.add(torch.zeros(2, 3, 3, 3), torch.arange(2))
    with pytest.raises(ValueError, match="does not fit"):
        buffer.add(ids(2), None)
