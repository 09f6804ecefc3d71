"""Profiles: every size and budget of a run, so one flag scales the whole grid.

``smoke`` runs a cell in seconds (tests), ``cpu`` in minutes on a 2-core laptop (the default),
``cpu-x4`` is ``cpu`` with 4x the victims' training (a convergence check of utility numbers),
``paper`` uses the published settings and is meant for GPUs and clusters.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, replace

# Samples per forward pass where nothing trains (evaluation, decoding, observing payloads and
# gradients): a bound on memory, the same in every profile and for every attack.
INFERENCE_BATCH_SIZE = 500


@dataclass(frozen=True)
class TextConfig:
    """Sizes and step counts of a language-modelling cell (``wikitext-*`` with a ``gpt2`` victim), per profile.

    Attributes:
        block_tokens: tokens per training and evaluation block (the paper: 256).
        batch_size: blocks per training step.
        steps: training steps (one client).
        eval_every: steps between evaluations; the best perplexity over these (and the last step) is
            the cell's result.
        eval_blocks: evaluation blocks, the first ones of the evaluation text (``None``: all).
        train_blocks: training blocks, the first ones of the training text (``None``: all).
        lr: Adam learning rate of every party.
        vocab: ``None`` tokenizes with GPT-2's own tokenizer (50,257 tokens, read from files);
            an integer trains a byte-level BPE of that many tokens on the training text instead,
            where GPT-2's output layer would dominate the cost (``cpu``: measured in
            ``benchmarks/lm_vocab_cost.py``).
    """

    block_tokens: int
    batch_size: int
    steps: int
    eval_every: int
    eval_blocks: int | None
    train_blocks: int | None
    lr: float
    vocab: int | None

    def __post_init__(self) -> None:
        for name in ("block_tokens", "batch_size", "steps", "eval_every", "eval_blocks", "train_blocks", "vocab"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"text configuration: {name} must be >= 1, got {value}")
        if self.lr <= 0:
            raise ValueError(f"text configuration: lr must be positive, got {self.lr}")


@dataclass(frozen=True)
class Profile:
    """Sizes and budgets of one profile.

    Attributes:
        name: profile name, recorded on every result row.
        members: client training images (the attacked members); ``None`` takes all available.
        nonmembers: attacker auxiliary images, disjoint from members and test.
        test: held-out test images for utility.
        epochs: victim training epochs.
        batch_size: training batch size per client step.
        lr: Adam learning rate of every party.
        eval_batch_size: batch size for evaluation passes.
        targets: members attacked per cell (attacks may take a subset within their own budget).
        text: the configuration of language-modelling cells (the image and tabular sizes above do not apply).
    """

    name: str
    members: int | None
    nonmembers: int | None
    test: int | None
    epochs: int
    batch_size: int
    lr: float = 1e-3
    eval_batch_size: int = INFERENCE_BATCH_SIZE
    targets: int = 1000
    text: TextConfig | None = None

    def __post_init__(self) -> None:
        for field in ("members", "nonmembers", "test"):
            value = getattr(self, field)
            if value is not None and value < 1:
                raise ValueError(f"profile {self.name}: {field} must be >= 1")
        if self.epochs < 1 or self.batch_size < 1 or self.lr <= 0 or self.targets < 1:
            raise ValueError(f"profile {self.name}: epochs, batch_size and lr must be positive")

    def as_dict(self) -> dict:
        return asdict(self)


SMOKE_TEXT = TextConfig(
    block_tokens=256, batch_size=2, steps=4, eval_every=2, eval_blocks=4, train_blocks=16, lr=1e-3, vocab=300
)
# Fresh models on the offline WikiText-2 validation text (about 1,100 blocks of a 4,096-token BPE):
# 150 steps of 8 blocks is about one pass. A trained BPE replaces GPT-2's 50,257-token output layer,
# which costs 6x the small model's step (benchmarks/lm_vocab_cost.py).
CPU_TEXT = TextConfig(
    block_tokens=256, batch_size=8, steps=150, eval_every=30, eval_blocks=128, train_blocks=None, lr=1e-3, vocab=4096
)
# App. B-B5: 80,000 blocks of 256 tokens at batch 8 (10,000 steps), learning rate 5e-5, 1,500
# held-out blocks, GPT-2's tokenizer (pretrained weights where the user has them).
PAPER_TEXT = TextConfig(
    block_tokens=256, batch_size=8, steps=10_000, eval_every=500, eval_blocks=1500, train_blocks=80_000, lr=5e-5,
    vocab=None,
)

# The offline MNIST test split holds 10,000 images: 6k members, 2k non-members, 2k test.
CPU = Profile(name="cpu", members=6000, nonmembers=2000, test=2000, epochs=10, batch_size=64, text=CPU_TEXT)

PROFILES: dict[str, Profile] = {
    "smoke": Profile(
        name="smoke", members=256, nonmembers=128, test=256, epochs=1, batch_size=64, targets=64, text=SMOKE_TEXT
    ),
    "cpu": CPU,
    # The cpu profile with every victim trained 4x as long (image epochs, text steps): the
    # convergence check of a utility number (is the cost at the cpu budget still there at 4x?).
    "cpu-x4": replace(CPU, name="cpu-x4", epochs=4 * CPU.epochs, text=replace(CPU_TEXT, steps=4 * CPU_TEXT.steps)),
    # UnSplit's released schedule (App. B-C3): 20 epochs, batch 64, Adam 1e-3.
    "paper": Profile(
        name="paper", members=None, nonmembers=None, test=None, epochs=20, batch_size=64, text=PAPER_TEXT
    ),
}


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise KeyError(f"unknown profile '{name}' (known: {', '.join(PROFILES)})") from None
