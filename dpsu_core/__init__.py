"""dpsu_core: differentially private set union for vocabularies and n-grams.

Never imports Streamlit. Public API::

    from dpsu_core import load_corpus, get_mechanism
    corpus = load_corpus("posts.csv")
    release = get_mechanism("policy-gaussian", epsilon=3, delta=1e-6, max_items=100).release(corpus)
"""

from .corpus import load_corpus
from .corpus.model import Corpus, CorpusStats, SourceInfo
from .errors import DpsuError, InputError, ParameterError
from .mechanisms import Calibration, Mechanism, Release, get_mechanism, mechanisms

__version__ = "0.1.0"

__all__ = [
    "Calibration",
    "Corpus",
    "CorpusStats",
    "DpsuError",
    "InputError",
    "Mechanism",
    "ParameterError",
    "Release",
    "SourceInfo",
    "get_mechanism",
    "load_corpus",
    "mechanisms",
    "__version__",
]
