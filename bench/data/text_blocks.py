"""Tokenize a text corpus and cut it into fixed-length blocks of next-token prediction.

A block is ``block_tokens`` consecutive tokens ``x`` and the same tokens shifted by one ``y`` (the
targets), taken without overlap from the start of the text; the tail that does not fill a block is
dropped. The tokenizer is the profile's choice (:class:`bench.profiles.TextConfig`): GPT-2's own
byte-level BPE read from ``<root>/gpt2-tokenizer/{vocab.json,merges.txt}``, or a byte-level BPE of a
given size trained on the training text (deterministic: same text, same merges).

Both use the ``tokenizers`` library, which comes with the optional ``text`` extra.
"""
from __future__ import annotations

from pathlib import Path

import torch

from bench.data.root import DatasetLayout, MissingDataError
from bench.data.splits import CarvedData
from bench.data.types import ArraySplit
from bench.data.wikitext import TextCorpus
from bench.errors import MissingExtraError
from bench.profiles import Profile, TextConfig

GPT2_TOKENIZER = DatasetLayout(("gpt2-tokenizer", "gpt2", "."), ("vocab.json", "merges.txt"))


def _tokenizers():
    try:
        import tokenizers
    except ImportError:
        raise MissingExtraError("text datasets need the 'tokenizers' package: pip install 'splitbench[text]'") from None
    return tokenizers


def gpt2_tokenizer(root: Path):
    """GPT-2's byte-level BPE from its two files under the data root.

    Raises:
        MissingDataError: when ``vocab.json`` and ``merges.txt`` are not there.
    """
    folder = GPT2_TOKENIZER.find(Path(root))
    if folder is None:
        raise MissingDataError("gpt2-tokenizer", root, ["vocab.json", "merges.txt"], Path(root) / "gpt2-tokenizer")
    return _tokenizers().ByteLevelBPETokenizer(str(folder / "vocab.json"), str(folder / "merges.txt"))


def trained_tokenizer(text: str, vocab: int):
    """A byte-level BPE of ``vocab`` tokens trained on ``text`` (merges seen at least twice)."""
    tokenizer = _tokenizers().ByteLevelBPETokenizer()
    tokenizer.train_from_iterator(text.splitlines(keepends=True), vocab_size=vocab, min_frequency=2, show_progress=False)
    return tokenizer


def blocks(ids: list[int], block_tokens: int, limit: int | None) -> ArraySplit:
    """Non-overlapping blocks of ``block_tokens`` inputs and their next-token targets (at most ``limit``)."""
    tokens = torch.tensor(ids, dtype=torch.long)
    n = (len(tokens) - 1) // block_tokens
    if limit is not None:
        n = min(n, limit)
    if n < 1:
        raise ValueError(f"the text holds {len(tokens)} tokens, fewer than one block of {block_tokens} + 1")
    x = tokens[: n * block_tokens].view(n, block_tokens)
    y = tokens[1 : n * block_tokens + 1].view(n, block_tokens)
    return ArraySplit(x, y)


def carve_text(corpus: TextCorpus, profile: Profile, root: Path) -> CarvedData:
    """Training blocks (the members), evaluation blocks (the test split) and no non-members.

    ``num_classes`` is the tokenizer's vocabulary size; ``description`` names the tokenizer.
    """
    text: TextConfig | None = profile.text
    if text is None:
        raise ValueError(f"profile {profile.name} has no text configuration")
    if text.vocab is None:
        tokenizer, described = gpt2_tokenizer(root), "GPT-2's tokenizer"
    else:
        tokenizer = trained_tokenizer(corpus.train_text, text.vocab)
        described = f"a byte-level BPE of {tokenizer.get_vocab_size():,} tokens trained on the training text"
    train = blocks(tokenizer.encode(corpus.train_text).ids, text.block_tokens, text.train_blocks)
    test = blocks(tokenizer.encode(corpus.eval_text).ids, text.block_tokens, text.eval_blocks)
    empty = ArraySplit(train.x[:0], train.y[:0])
    return CarvedData(
        corpus.name, tokenizer.get_vocab_size(), "text", train, empty, test,
        description=f"{described}; {len(train):,} training and {len(test):,} evaluation blocks of {text.block_tokens} tokens",
    )
