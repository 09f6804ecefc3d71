"""WikiText loaders (both file-name conventions), tokenizers read from files, 256-token blocks."""
import pytest
import torch

pytest.importorskip("tokenizers")

from bench.data import DATASETS  # noqa: E402
from bench.data.root import MissingDataError  # noqa: E402
from bench.data.text_blocks import blocks, carve_text, gpt2_tokenizer, trained_tokenizer  # noqa: E402
from bench.profiles import PROFILES, Profile, TextConfig  # noqa: E402

LINES = [" = Valkyria Chronicles III = \n", " \n", " Senjō no Valkyria 3 : <unk> Chronicles @-@ a game . \n"]


def _write(folder, names):
    folder.mkdir(parents=True, exist_ok=True)
    for split, name in names.items():
        (folder / name).write_text("".join(f"{split} {line}" for line in LINES * 40), encoding="utf-8")


def test_published_layout_with_a_train_file_trains_on_train_and_evaluates_on_valid(tmp_path):
    _write(tmp_path / "wikitext-103", {s: f"wiki.{s}.tokens" for s in ("train", "valid", "test")})
    corpus = DATASETS.get("wikitext-103")(tmp_path)
    assert corpus.train_text.startswith("train ") and corpus.eval_text.startswith("valid ")
    assert corpus.source == "wikitext-103: trains on wiki.train.tokens, evaluates on wiki.valid.tokens (train file present)"


def test_without_a_train_file_the_validation_text_trains_and_the_test_text_evaluates(tmp_path):
    _write(tmp_path / "wikitext-2", {"valid": "valid.txt", "test": "test.txt"})
    corpus = DATASETS.get("wikitext-2")(tmp_path)
    assert corpus.train_text.startswith("valid ") and corpus.eval_text.startswith("test ")
    assert "no train file: the validation text trains" in corpus.source


def test_the_dataset_folder_itself_can_be_the_data_root(tmp_path):
    _write(tmp_path, {"valid": "wiki.valid.tokens", "test": "wiki.test.tokens"})
    assert DATASETS.get("wikitext-2")(tmp_path).eval_file.name == "wiki.test.tokens"


def test_missing_files_are_one_line_naming_them(tmp_path):
    _write(tmp_path / "wikitext-2", {"valid": "wiki.valid.tokens"})
    with pytest.raises(MissingDataError) as err:
        DATASETS.get("wikitext-2")(tmp_path)
    message = str(err.value)
    assert "\n" not in message and "wiki.test.tokens" in message and str(tmp_path / "wikitext-2") in message


def test_blocks_are_consecutive_tokens_and_their_next_tokens():
    split = blocks(list(range(20)), 4, None)
    assert split.x.tolist() == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11], [12, 13, 14, 15]]
    assert torch.equal(split.y, split.x + 1)
    assert len(blocks(list(range(20)), 4, 2)) == 2
    assert len(blocks(list(range(17)), 4, None)) == 4 and len(blocks(list(range(16)), 4, None)) == 3
    with pytest.raises(ValueError, match="fewer than one block"):
        blocks(list(range(4)), 4, None)


def test_trained_tokenizer_is_deterministic_and_round_trips():
    text = "".join(LINES * 40)
    first, second = trained_tokenizer(text, 300), trained_tokenizer(text, 300)
    assert first.get_vocab_size() == second.get_vocab_size() <= 300
    assert first.encode(text).ids == second.encode(text).ids
    assert first.decode(first.encode(text).ids) == text


def test_gpt2_tokenizer_is_read_from_its_two_files(tmp_path):
    reference = trained_tokenizer("".join(LINES * 40), 280)
    folder = tmp_path / "gpt2-tokenizer"
    folder.mkdir()
    reference.save_model(str(folder))
    assert {p.name for p in folder.iterdir()} == {"vocab.json", "merges.txt"}
    loaded = gpt2_tokenizer(tmp_path)
    assert loaded.encode(LINES[2]).ids == reference.encode(LINES[2]).ids
    with pytest.raises(MissingDataError, match="vocab.json"):
        gpt2_tokenizer(tmp_path / "elsewhere")


def test_carving_tokenizes_by_the_profile_and_holds_out_the_evaluation_text(tmp_path):
    _write(tmp_path / "wikitext-2", {"valid": "valid.txt", "test": "test.txt"})
    corpus = DATASETS.get("wikitext-2")(tmp_path)
    text = TextConfig(block_tokens=16, batch_size=2, steps=1, eval_every=1, eval_blocks=3, train_blocks=None,
                      lr=1e-3, vocab=280)
    profile = Profile(name="t", members=1, nonmembers=1, test=1, epochs=1, batch_size=1, text=text)
    data = carve_text(corpus, profile, tmp_path)
    assert data.kind == "text" and data.num_classes <= 280 and data.input_shape == (16,)
    assert len(data.test) == 3 and len(data.nonmembers) == 0 and len(data.members) > 3
    assert "byte-level BPE" in data.description and "3 evaluation blocks of 16 tokens" in data.description
    assert int(data.members.x.max()) < data.num_classes


def test_profiles_budget_text_cells():
    assert PROFILES["cpu"].text.block_tokens == PROFILES["paper"].text.block_tokens == 256
    assert PROFILES["paper"].text.vocab is None and PROFILES["paper"].text.lr == 5e-5
    with pytest.raises(ValueError, match="steps must be >= 1"):
        TextConfig(block_tokens=1, batch_size=1, steps=0, eval_every=1, eval_blocks=1, train_blocks=1, lr=1, vocab=1)
