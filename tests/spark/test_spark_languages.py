"""The Spark engine's executors call the same tokenize code as the local engine: the same segmenters, so the
same items on text of every script the auto tokenizer segments (and with --korean eojeol)."""

from __future__ import annotations

import numpy as np

from dpsu_core.corpus import load_corpus
from dpsu_core.engines.spark import load_spark_corpus

from .conftest import write_csv
from .test_spark_corpus import _assert_same_corpus

POSTS = [
    "我爱北京天安门，今天天气很好",
    "東京都に住んでいます。今日はいい天気ですね",
    "ภาษาไทยง่ายนิดเดียว ฉันรักประเทศไทย",
    "학교에 갔다 학교는 크다 BTS의 노래",
    "ខ្ញុំស្រឡាញ់ប្រទេសកម្ពុជា",
    "ພາສາລາວໃນປັດຈຸບັນ",
    "မြန်မာ စာ",
    "plain English, don't worry",
]


def test_every_script_gives_the_local_items(spark, tmp_path):
    """--korean eojeol reaches the executors the same way (``LoadOptions.preprocessing``), as every option does."""
    korean = "morphemes"
    rng = np.random.default_rng(2)
    rows = [(f"u{int(rng.integers(0, 40))}", " ".join(rng.choice(POSTS, 2).tolist())) for _ in range(200)]
    path = write_csv(tmp_path / "langs.csv", rows)
    local = load_corpus(path, korean=korean)
    built = load_spark_corpus(path, spark=spark, korean=korean).to_corpus()
    _assert_same_corpus(local, built)
    vocab = set(local.vocab.tolist())
    assert {"北京", "東京", "ภาษาไทย", "ស្រឡាញ់", "ພາສາລາວ"} <= vocab
    assert ("학교" in vocab) == (korean == "morphemes") and ("학교에" in vocab) == (korean == "eojeol")

    # the local load names what it did per language ("none in the text" for a language absent); the Spark engine's
    # executors segment, so it names what the driver has installed: the same segmenter for every language present
    def per_language(text: str) -> dict[str, str]:
        return dict(p.split(": ", 1) for p in text.split("(", 1)[1].rsplit(")", 1)[0].split("; "))

    ran, spark_says = per_language(local.source.tokenization), per_language(built.source.tokenization)
    present = {k: v for k, v in ran.items() if v != "none in the text"}
    assert present and all(spark_says[k] == v for k, v in present.items()), (present, spark_says)
