"""The GPT-2 victim: where the cut falls, that the split model is the whole model, causality, weights."""
import pytest
import torch

pytest.importorskip("transformers")

from victims.gpt2 import GPT2, SIZES, WEIGHTS_ENV, _pretrained  # noqa: E402


@pytest.mark.parametrize("size,layers,client_blocks", [
    ("124m", 12, 1), ("355m", 24, 2), ("774m", 36, 4), ("1.5b", 48, 5), ("cpu-s", 4, 1), ("cpu-m", 6, 1), ("tiny", 2, 1),
])
def test_the_client_keeps_a_tenth_of_the_blocks(size, layers, client_blocks):
    assert SIZES[size].layers == layers
    assert SIZES[size].client_blocks == max(1, round(0.1 * layers)) == client_blocks


def _parts(seed=0, vocab=50, tokens=16):
    torch.manual_seed(seed)
    return GPT2().build(cut="tiny", num_classes=vocab, input_shape=(tokens,))


def test_cut_shape_is_tokens_by_model_width_and_parts_compose_to_logits():
    parts = _parts()
    assert parts.cut_shape == (16, SIZES["tiny"].d_model)
    assert parts.init.startswith("fresh")
    assert len(parts.head.blocks) == 1 and len(parts.backbone.blocks) == SIZES["tiny"].layers - 1
    ids = torch.randint(0, 50, (3, 16))
    z = parts.head(ids)
    assert z.shape == (3, *parts.cut_shape)
    assert parts.tail(parts.backbone(z)).shape == (3, 16, 50)


def test_split_model_equals_the_unsplit_hugging_face_model():
    from torch import nn
    from transformers import GPT2LMHeadModel

    from victims.gpt2 import _transformers

    parts = _parts(seed=4)
    config = _transformers().GPT2Config(
        vocab_size=50, n_positions=16, n_embd=32, n_layer=2, n_head=2, tie_word_embeddings=False,
        bos_token_id=None, eos_token_id=None,
    )
    reference = GPT2LMHeadModel._from_config(config, attn_implementation="sdpa")
    # Hugging Face's own forward over the very modules the split holds
    reference.transformer.wte, reference.transformer.wpe = parts.head.wte, parts.head.wpe
    reference.transformer.h = nn.ModuleList([*parts.head.blocks, *parts.backbone.blocks])
    reference.transformer.ln_f, reference.lm_head = parts.tail.ln_f, parts.tail.lm_head
    reference.eval()
    ids = torch.randint(0, 50, (2, 16))
    ours = parts.tail(parts.backbone(parts.head(ids)))
    torch.testing.assert_close(ours, reference(ids).logits, atol=1e-5, rtol=1e-5)


def test_a_later_token_never_changes_an_earlier_tokens_state():
    parts = _parts()
    parts.head.eval()
    ids = torch.randint(0, 50, (1, 16))
    changed = ids.clone()
    changed[0, 10] = (ids[0, 10] + 1) % 50
    before, after = parts.head(ids), parts.head(changed)
    torch.testing.assert_close(before[:, :10], after[:, :10])
    assert not torch.allclose(before[:, 10:], after[:, 10:])


def test_output_layer_is_its_own_parameter():
    parts = _parts()
    assert parts.tail.lm_head.weight is not parts.head.wte.weight


def test_pretrained_weights_are_read_from_the_weights_folder(tmp_path, monkeypatch):
    from victims.gpt2 import GPT2_VOCAB, _transformers

    config = _transformers().GPT2Config(n_embd=32, n_layer=2, n_head=2, n_positions=64)
    _transformers().GPT2LMHeadModel(config).save_pretrained(tmp_path / "gpt2")
    monkeypatch.setenv(WEIGHTS_ENV, str(tmp_path))
    model, init = _pretrained(SIZES["124m"], GPT2_VOCAB)
    assert model is not None and init == f"pretrained from {tmp_path / 'gpt2'}"
    assert _pretrained(SIZES["124m"], 4096) == (None, "a 4,096-token vocabulary, not GPT-2's")
    assert _pretrained(SIZES["cpu-s"], GPT2_VOCAB)[0] is None


def test_without_weights_the_init_says_fresh_and_why(tmp_path, monkeypatch):
    from victims.gpt2 import GPT2_VOCAB

    monkeypatch.setenv(WEIGHTS_ENV, str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    model, why = _pretrained(SIZES["355m"], GPT2_VOCAB)
    assert model is None and "no gpt2-medium weights" in why
