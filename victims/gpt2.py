"""GPT-2 split a tenth of the way into its depth: the client keeps the embeddings and the first blocks.

The ``cut`` names the model size; the cut itself is always after ``max(1, round(0.1·L))`` of the
``L`` transformer blocks (App. B-B5), and the payload is the residual state there, per token:
``(T, d_model)`` per block of ``T`` tokens.

* Head (client): token and position embeddings, dropout, the first ``max(1, round(0.1·L))`` blocks.
* Backbone (server): the remaining blocks.
* Tail: the final LayerNorm and the output layer (client-owned in U-shaped SL).

Sizes: the paper's four (``124m``, ``355m``, ``774m``, ``1.5b``: 12–48 blocks, d_model 768–1600)
and three small ones for the ``smoke`` and ``cpu`` profiles (``tiny``, ``cpu-s``, ``cpu-m``).

Choices the paper leaves unstated:

* The output layer is not tied to the token embedding: the two sit on different sides of the
  server in vanilla SL, so one rule for both protocols (pretrained weights copy the embedding into it).
* Pretrained weights are read where the user has them: ``$SPLITBENCH_GPT2_WEIGHTS/<hub name>``
  (``gpt2``, ``gpt2-medium``, ``gpt2-large``, ``gpt2-xl``: a ``save_pretrained`` folder), then the
  Hugging Face cache; never downloaded. They need GPT-2's own 50,257-token vocabulary. Otherwise the
  model starts from a fresh GPT-2 initialisation; :attr:`SplitParts.init` says which, and every
  row records it.
* The small sizes drop dropout (they train for about one pass over their text); the paper's sizes
  keep GPT-2's 0.1.
* Attention runs through PyTorch's scaled-dot-product kernel with its causal mask.

Needs the optional ``transformers`` package (``pip install 'splitbench[text]'``), imported only when a
model is built.

Paper: LightSplit (arXiv:2605.13265), App. B-B5 and Fig. 9.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor, nn

from bench.errors import MissingExtraError
from victims.base import VICTIMS, SplitParts, Victim

WEIGHTS_ENV = "SPLITBENCH_GPT2_WEIGHTS"
GPT2_VOCAB = 50_257
BLOCK_TOKENS = 256


@dataclass(frozen=True)
class GPT2Size:
    """One GPT-2 configuration: blocks, model width, heads, dropout and its hub name (if published)."""

    layers: int
    d_model: int
    heads: int
    dropout: float = 0.1
    hub_name: str | None = None

    @property
    def client_blocks(self) -> int:
        return max(1, round(0.1 * self.layers))


SIZES = {
    "tiny": GPT2Size(2, 32, 2, dropout=0.0),
    "cpu-s": GPT2Size(4, 128, 4, dropout=0.0),
    "cpu-m": GPT2Size(6, 192, 6, dropout=0.0),
    "124m": GPT2Size(12, 768, 12, hub_name="gpt2"),
    "355m": GPT2Size(24, 1024, 16, hub_name="gpt2-medium"),
    "774m": GPT2Size(36, 1280, 20, hub_name="gpt2-large"),
    "1.5b": GPT2Size(48, 1600, 25, hub_name="gpt2-xl"),
}


def _transformers():
    try:
        import transformers
    except ImportError:
        raise MissingExtraError("victim 'gpt2' needs the 'transformers' package: pip install 'splitbench[text]'") from None
    return transformers


def _run_block(block: nn.Module, hidden: Tensor) -> Tensor:
    out = block(hidden)
    return out[0] if isinstance(out, tuple) else out


class GPT2ClientHead(nn.Module):
    """Embeddings and the client's blocks: token ids ``(B, T)`` → residual state ``(B, T, d)``."""

    def __init__(self, transformer: nn.Module, blocks: int) -> None:
        super().__init__()
        self.wte, self.wpe, self.drop = transformer.wte, transformer.wpe, transformer.drop
        self.blocks = nn.ModuleList(transformer.h[:blocks])

    def forward(self, ids: Tensor) -> Tensor:
        positions = torch.arange(ids.shape[1], device=ids.device)
        hidden = self.drop(self.wte(ids) + self.wpe(positions))
        for block in self.blocks:
            hidden = _run_block(block, hidden)
        return hidden


class GPT2Blocks(nn.Module):
    """The server's blocks: residual state → residual state."""

    def __init__(self, blocks: list[nn.Module]) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(blocks)

    def forward(self, hidden: Tensor) -> Tensor:
        for block in self.blocks:
            hidden = _run_block(block, hidden)
        return hidden


class GPT2OutputLayer(nn.Module):
    """Final LayerNorm and the (untied) output layer: residual state → logits ``(B, T, V)``."""

    def __init__(self, ln_f: nn.Module, lm_head: nn.Linear) -> None:
        super().__init__()
        self.ln_f, self.lm_head = ln_f, lm_head

    def forward(self, hidden: Tensor) -> Tensor:
        return self.lm_head(self.ln_f(hidden))


def _pretrained(size: GPT2Size, vocab: int):
    """The pretrained model and where it came from, or ``None`` and why not."""
    if size.hub_name is None:
        return None, "no published weights at this size"
    if vocab != GPT2_VOCAB:
        return None, f"a {vocab:,}-token vocabulary, not GPT-2's"
    transformers = _transformers()
    candidates = []
    if os.environ.get(WEIGHTS_ENV):
        candidates.append(str(Path(os.environ[WEIGHTS_ENV]) / size.hub_name))
    candidates.append(size.hub_name)
    for where in candidates:
        try:
            model = transformers.GPT2LMHeadModel.from_pretrained(where, local_files_only=True, attn_implementation="sdpa")
        except (OSError, ValueError):
            continue
        return model, f"pretrained from {where}"
    return None, f"no {size.hub_name} weights in ${WEIGHTS_ENV} or the Hugging Face cache"


@VICTIMS.register("gpt2")
class GPT2(Victim):
    """GPT-2 at one of its sizes, cut after a tenth of its blocks; the cut's name is the size."""

    cuts = {name: (BLOCK_TOKENS, size.d_model) for name, size in SIZES.items()}
    default_cut = "cpu-s"
    input_shape = (BLOCK_TOKENS,)
    datasets = ("wikitext-2", "wikitext-103")
    per_token = True
    requires = "transformers"

    def build(self, *, cut: str, num_classes: int, input_shape: tuple[int, ...]) -> SplitParts:
        """Parts of the ``cut``-sized model (pretrained where available, else freshly initialised).

        Args:
            cut: the size (``tiny``, ``cpu-s``, ``cpu-m``, ``124m``, ``355m``, ``774m``, ``1.5b``).
            num_classes: the vocabulary size.
            input_shape: ``(T,)``, tokens per block.

        Raises:
            ValueError: for an unknown size or an input shape that is not ``(T,)``.
            MissingExtraError: when ``transformers`` is not installed.
        """
        self.check_cut(cut)
        if len(input_shape) != 1 or input_shape[0] < 1:
            raise ValueError(f"gpt2 needs a (tokens,) input shape, got {input_shape}")
        size, tokens = SIZES[cut], input_shape[0]
        model, init = _pretrained(size, num_classes)
        if model is None:
            init = f"fresh ({init})"
            config = _transformers().GPT2Config(
                vocab_size=num_classes, n_positions=max(tokens, 1024 if size.hub_name else tokens),
                n_embd=size.d_model, n_layer=size.layers, n_head=size.heads, resid_pdrop=size.dropout,
                embd_pdrop=size.dropout, attn_pdrop=size.dropout, tie_word_embeddings=False, bos_token_id=None,
                eos_token_id=None,
            )
            model = _transformers().GPT2LMHeadModel._from_config(config, attn_implementation="sdpa")
        elif model.lm_head.weight is model.transformer.wte.weight:
            model.lm_head.weight = nn.Parameter(model.transformer.wte.weight.detach().clone())
        if tokens > model.config.n_positions:
            raise ValueError(f"gpt2 {cut}: {tokens} tokens per block exceed its {model.config.n_positions} positions")
        body, blocks = model.transformer, size.client_blocks
        return SplitParts(
            head=GPT2ClientHead(body, blocks),
            backbone=GPT2Blocks(list(body.h[blocks:])),
            tail=GPT2OutputLayer(body.ln_f, model.lm_head),
            cut_shape=(tokens, size.d_model),
            init=init,
        )
