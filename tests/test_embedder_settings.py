"""Bringing your own embedder: a prefix and a length limit for model families that need them
(e5's "query: "), with a tiny sentence-transformers model built here, and the warning when
an English-only embedder meets Chinese samples."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from standins import EMBEDDER, JUDGE, StandIns

from localeval.backends import embedder_backend
from localeval.cli import main
from localeval.config import load_models_config
from localeval.errors import ConfigError

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

WORDS = ["query", ":", "passage", "the", "tower", "was", "finished", "in", "1889", "paris"]


def tiny_model(folder: Path) -> Path:
    """A two-layer BERT with random weights and a ten-word vocabulary, saved as a
    sentence-transformers folder (mean pooling)."""
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers import BertConfig, BertModel, BertTokenizerFast

    try:  # where sentence-transformers 6 keeps them; older releases: .models
        from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    except ImportError:  # pragma: no cover
        from sentence_transformers.models import Pooling, Transformer

    torch.manual_seed(0)
    vocab = folder / "vocab"
    vocab.mkdir(parents=True)
    (vocab / "vocab.txt").write_text(
        "\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n"
    )
    tokenizer = BertTokenizerFast(str(vocab / "vocab.txt"))
    config = BertConfig(
        vocab_size=len(WORDS) + 5,
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
    )
    bert = folder / "bert"
    BertModel(config).save_pretrained(bert)
    tokenizer.save_pretrained(bert)
    transformer = Transformer(str(bert), max_seq_length=32)
    dimension = getattr(transformer, "get_embedding_dimension", None)  # renamed in 6
    if dimension is None:  # pragma: no cover
        dimension = transformer.get_word_embedding_dimension
    pooling = Pooling(dimension(), "mean")
    out = folder / "model"
    SentenceTransformer(modules=[transformer, pooling], device="cpu").save(str(out))
    return out


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_model(tmp_path_factory.mktemp("tiny-embedder"))


def entry(model: Path, **settings: object) -> dict[str, object]:
    return {"path": str(model), "device": "cpu", **settings}


def test_a_prefix_is_put_before_every_text_and_names_the_model(model: Path) -> None:
    backend = embedder_backend("sentence-transformers")
    plain = backend.settings(entry(model), "here", model.parent)
    e5 = backend.settings(entry(model, prefix="query: ", max_length=8), "here", model.parent)
    assert backend.identify("e", plain).settings == {}
    assert backend.identify("e", e5).settings == {"prefix": "query: ", "max_length": 8}
    text = ["the tower was finished in 1889"]
    without = backend.load("e", plain).embed(text)
    loaded = backend.load("e", e5)
    assert loaded._model.max_seq_length == 8
    prefixed = loaded.embed(text)
    assert not np.allclose(without, prefixed)
    # the same as embedding the prefixed text without a prefix setting (and length limit)
    limited = backend.settings(entry(model, max_length=8), "here", model.parent)
    assert np.allclose(backend.load("e", limited).embed(["query: " + text[0]]), prefixed)


def test_bad_embedder_settings_are_refused(model: Path) -> None:
    backend = embedder_backend("sentence-transformers")
    with pytest.raises(ConfigError, match="'max_length' must be at least 1, got 0"):
        backend.settings(entry(model, max_length=0), "here", model.parent)
    with pytest.raises(ConfigError, match="'prefix' must be str, got 3"):
        backend.settings(entry(model, prefix=3), "here", model.parent)


def test_an_embedder_entry_may_say_which_languages_it_reads(tmp_path: Path) -> None:
    models = tmp_path / "models.toml"
    models.write_text(f'[embedders."e"]\nbackend = "{EMBEDDER}"\nlanguages = ["en"]\n')
    assert load_models_config(models).embedder("e").languages == ("en",)
    models.write_text(f'[embedders."e"]\nbackend = "{EMBEDDER}"\nlanguages = ["fr"]\n')
    with pytest.raises(ConfigError) as refused:
        load_models_config(models)
    assert str(refused.value) == (
        f"{models} [embedders.e]: 'languages' must be a list of 'en', 'zh', got ['fr']"
    )


def test_chinese_samples_and_an_english_only_embedder_give_a_warning(
    tmp_path: Path, stand_ins: StandIns
) -> None:
    from fakes import FakeEmbedder

    stand_ins.use(None, FakeEmbedder())
    models = tmp_path / "models.toml"
    models.write_text(
        f'[judges."j"]\nbackend = "{JUDGE}"\n'
        f'[embedders."e"]\nbackend = "{EMBEDDER}"\nlanguages = ["en"]\n'
    )
    rows = [
        {
            "question": "埃菲尔铁塔何时建成？",
            "contexts": ["它于1889年建成。"],
            "answer": "1889年。",
        },
        {"question": "When?", "contexts": ["In 1889."], "answer": "1889."},
    ]
    data = tmp_path / "d.jsonl"
    data.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n")
    args = ["evaluate", str(data), "-m", "context_precision", "--models", str(models)]
    # the embedder deciding chunk usefulness for Chinese samples too (by default the judge
    # does, and nothing warns: test_context_precision_sources.py)
    args += ["--context-precision-usefulness", "embedder"]
    result = CliRunner().invoke(main, [*args, "--db", str(tmp_path / "r.db")])
    assert result.exit_code in (0, 1), result.output
    assert (
        f"Warning: {data}: 1 in Chinese of 2 samples, but embedder 'e' is for English only "
        "(models.toml 'languages'): context_precision will compare its texts poorly there; use "
        "a multilingual embedder (README, models.toml)\n"
    ) in result.stderr
    # no embedding metric, no warning
    quiet = CliRunner().invoke(
        main,
        [
            "evaluate",
            str(data),
            "-m",
            "bleu",
            "--models",
            str(models),
            "--db",
            str(tmp_path / "q.db"),
        ],
    )
    assert "Warning" not in quiet.stderr
