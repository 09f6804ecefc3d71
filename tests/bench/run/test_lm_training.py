"""Language-model cells: every per-token defense trains on a tiny GPT-2, perplexity is what it says."""
import math
import random

import pytest
import torch
from torch import nn

pytest.importorskip("transformers")

from bench.run.cell import Cell  # noqa: E402
from bench.run.cell_runner import RunContext, execute_cell  # noqa: E402
from bench.run.lm_training import perplexity  # noqa: E402
from victims.gpt2 import SIZES  # noqa: E402

T, D = 256, SIZES["tiny"].d_model


def write_corpus(root, words=9000):
    """A WikiText-2 folder (valid + test, PyTorch-example names) of seeded pseudo-words."""
    rng = random.Random(0)
    vocabulary = ["".join(rng.choice("abcdefghij") for _ in range(rng.randint(2, 6))) for _ in range(400)]
    folder = root / "wikitext-2"
    folder.mkdir(parents=True)
    for split in ("valid", "test"):
        lines = [" ".join(rng.choice(vocabulary) for _ in range(15)) + " . \n" for _ in range(words // 15)]
        (folder / f"{split}.txt").write_text("".join(lines), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def ctx(tmp_path_factory):
    return RunContext(data_root=write_corpus(tmp_path_factory.mktemp("text")))


def _cell(defense, seed=0, **knobs):
    return Cell(dataset="wikitext-2", victim="gpt2", cut="tiny", defense=defense, profile="smoke", seed=seed,
                defense_knobs=knobs)


class _Uniform(nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.vocab = vocab

    def forward(self, x):
        return torch.zeros(*x.shape, self.vocab)


def test_perplexity_of_uniform_logits_is_the_vocabulary_size():
    x = torch.randint(0, 37, (5, 8))
    assert perplexity(_Uniform(37), x, x, batch_size=2) == pytest.approx(37.0)


@pytest.mark.parametrize("defense,knobs,per_token_bytes", [
    ("raw", {}, 4 * D),
    ("lightsplit-f", {"cr": 8}, 4 * D // 8),
    ("lightsplit-l", {"cr": 8}, 4 * D // 8),
    ("topk", {"cr": 8}, ((4 * (D // 8)) // 6) * 6),
    ("learned-1x1", {"cr": 8}, 4 * D // 8),
    ("lightsplit-f+dp", {"cr": 8, "sigma": 0.5}, 4 * D // 8),
])
def test_every_per_token_defense_trains_a_tiny_gpt2(ctx, defense, knobs, per_token_bytes):
    record = execute_cell(_cell(defense, **knobs), ctx)
    assert record.status == "ok", record.error
    m = record.metrics
    assert math.isfinite(m["best_val_perplexity"]) and 1 < m["best_val_perplexity"] <= 1.5 * m["vocab_size"]
    assert m["best_val_perplexity"] <= m["final_val_perplexity"]
    assert m["bytes_up_per_sample"] == T * per_token_bytes and m["bytes_up_per_token"] == per_token_bytes
    assert m["pretrained"] == 0.0 and record.notes["pretrained"].startswith("fresh")
    assert record.notes["best_val_perplexity"].startswith("evaluation perplexity by step: 2:")
    assert "no train file: the validation text trains" in record.provenance["data_source"]
    assert "accuracy" not in m and "chance_accuracy" not in m


def test_same_seed_same_perplexity_and_seeds_differ(ctx):
    first = execute_cell(_cell("lightsplit-f", cr=4), ctx).metrics["best_val_perplexity"]
    assert execute_cell(_cell("lightsplit-f", cr=4), ctx).metrics["best_val_perplexity"] == first
    assert execute_cell(_cell("lightsplit-f", seed=1, cr=4), ctx).metrics["best_val_perplexity"] != first


def test_an_attack_on_text_is_a_failed_cell_naming_why(ctx):
    from dataclasses import replace

    record = execute_cell(replace(_cell("raw"), attack="decoder-ref"), ctx)
    assert record.status == "failed" and "does not run on text" in record.error


def test_a_run_that_goes_non_finite_is_stored_diverged_at_its_step(ctx, monkeypatch):
    from defenses import DEFENSES
    from defenses.raw import RawDefense

    class NanFromTheThirdStep(RawDefense):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.calls = 0

        def encode(self, z):
            self.calls += self.training
            return super().encode(z) * (float("nan") if self.calls > 2 else 1.0)

    monkeypatch.setitem(DEFENSES._items, "nan-from-step-2", NanFromTheThirdStep)
    record = execute_cell(_cell("nan-from-step-2"), ctx)
    assert record.status == "ok", record.error
    assert record.metrics == {"best_val_perplexity": None, "final_val_perplexity": None, "diverged": 1.0,
                              "diverged_at_step": 2.0}
    assert record.notes["best_val_perplexity"].startswith("victim training diverged at step 2 (epoch 0)")
