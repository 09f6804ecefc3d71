"""WikiText-2 and WikiText-103 as text, in their published file layouts.

Layout (the published ``wikitext-2`` / ``wikitext-103`` folders, word-level ``.tokens`` files)::

    <root>/wikitext-2/wiki.train.tokens   wiki.valid.tokens   wiki.test.tokens
    <root>/wikitext-103/wiki.train.tokens wiki.valid.tokens   wiki.test.tokens

PyTorch's word-language-model example names the same files ``train.txt``, ``valid.txt`` and
``test.txt``; those names are accepted too (the offline copy under ``../shared/data`` uses them).

Which text trains and which evaluates depends on what is on disk:

* with the train file: train on ``train``, evaluate on ``valid`` (the paper's "validation perplexity");
* without it (the offline WikiText-2 copy holds only valid and test): train on ``valid``, evaluate on
  ``test``. Every row records which, in its ``data_source``.

The text is read as it is (with WikiText's own ``<unk>`` and `` @-@ `` tokens, one article line per
line); tokenization into 256-token blocks is the profile's choice (:mod:`bench.data.text_blocks`).

Paper: LightSplit (arXiv:2605.13265), App. B-B5 (GPT-2 fine-tuned on WikiText-103).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bench.data.registry import DATASETS, LAYOUTS
from bench.data.root import DatasetLayout, MissingDataError

SPLIT_FILES = {
    split: (f"wiki.{split}.tokens", f"{split}.txt") for split in ("train", "valid", "test")
}


@dataclass(frozen=True)
class TextCorpus:
    """A text dataset as found on disk: the training text and the evaluation text.

    Attributes:
        name: registry name (``wikitext-2``).
        train_text: the text the model trains on.
        eval_text: the text perplexity is measured on (never seen in training).
        train_file, eval_file: the files they were read from.
        source: the copy that was read and which files train and evaluate (recorded on every row).
    """

    name: str
    train_text: str
    eval_text: str
    train_file: Path
    eval_file: Path
    source: str
    kind: str = "text"


def _layout(name: str) -> DatasetLayout:
    # "*valid.t*" matches both names of the validation file (wiki.valid.tokens, valid.txt).
    return LAYOUTS.register(name)(DatasetLayout((name, f"{name}-raw", "."), ("*valid.t*",)))


def _split_file(folder: Path, split: str) -> Path | None:
    for filename in SPLIT_FILES[split]:
        if (folder / filename).is_file():
            return folder / filename
    return None


def _loader(name: str):
    layout = _layout(name)

    def load(root: Path, *, download: bool = False) -> TextCorpus:
        """The corpus: train on ``train`` and evaluate on ``valid`` where the train file exists, else
        train on ``valid`` and evaluate on ``test``.

        Args:
            root: the data root.
            download: ignored: WikiText is never fetched; place its files under the data root.

        Raises:
            MissingDataError: when neither a train and valid pair nor a valid and test pair is there.
        """
        root = Path(root)
        folder = layout.find(root)
        files = {split: _split_file(folder, split) for split in SPLIT_FILES} if folder else {}
        if files.get("train") and files.get("valid"):
            train, held_out, note = files["train"], files["valid"], "train file present"
        elif files.get("valid") and files.get("test"):
            train, held_out, note = files["valid"], files["test"], "no train file: the validation text trains"
        else:
            raise MissingDataError(
                name, root, ["wiki.valid.tokens", "wiki.test.tokens"], root / name,
                optional="wiki.train.tokens; the names train.txt, valid.txt, test.txt work too",
                reason="WikiText is never downloaded" if download else "",
            )
        return TextCorpus(
            name=name,
            train_text=train.read_text(encoding="utf-8"),
            eval_text=held_out.read_text(encoding="utf-8"),
            train_file=train,
            eval_file=held_out,
            source=f"{name}: trains on {train.name}, evaluates on {held_out.name} ({note})",
        )

    return DATASETS.register(name)(load)


load_wikitext2 = _loader("wikitext-2")
load_wikitext103 = _loader("wikitext-103")
