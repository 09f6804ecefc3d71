import torch

from bench.run.channel import DOWN, UP, Channel


def test_wire_metrics_divide_each_link_and_direction_by_the_samples_counted():
    channel = Channel()
    channel.send("cut", UP, torch.zeros(4, 8))  # 4 samples x 8 float32 = 128 bytes
    channel.send("cut", DOWN, torch.zeros(4, 8), torch.zeros(4, dtype=torch.int16))  # 128 + 8
    channel.send("tail", DOWN, torch.zeros(4, 10))  # 160
    channel.count_samples(4)
    assert channel.wire_metrics() == {
        "bytes_up_per_sample": 32.0,
        "bytes_down_per_sample": 34.0,
        "tail_bytes_up_per_sample": 0.0,
        "tail_bytes_down_per_sample": 40.0,
    }


def test_reset_forgets_bytes_and_samples():
    channel = Channel()
    channel.send("cut", UP, torch.zeros(2, 3))
    channel.count_samples(2)
    channel.reset()
    assert channel.wire_metrics()["bytes_up_per_sample"] == 0.0 and channel.samples == 0
