"""dpsu_core: differentially private set union for vocabularies and n-grams.

Never imports Streamlit. Public API::

    from dpsu_core import load_corpus, get_mechanism
    corpus = load_corpus("posts.csv")
    rel = release(corpus, "policy-gaussian", epsilon=3, delta=1e-6, max_items=100, corpus_name="posts")

``release`` charges the durable privacy ledger before drawing noise (``docs/ledger.md``);
``get_mechanism(...).release(corpus)`` is the uncharged primitive, for simulated and exploration corpora.

The names are loaded on first use (PEP 562), so ``import dpsu_core`` and the command line's ``--help``
do not pay for numba, Arrow and the mechanisms' kernels until something needs them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> the module that defines it
_EXPORTS = {
    "load_corpus": ".corpus",
    "Corpus": ".corpus.model",
    "CorpusStats": ".corpus.model",
    "SourceInfo": ".corpus.model",
    "DpsuError": ".errors",
    "InputError": ".errors",
    "ParameterError": ".errors",
    "Calibration": ".mechanisms",
    "Mechanism": ".mechanisms",
    "Release": ".mechanisms",
    "get_mechanism": ".mechanisms",
    "list_mechanisms": ".mechanisms",
    "mechanism_class": ".mechanisms",
    "release": ".api",
}

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
    "list_mechanisms",
    "load_corpus",
    "mechanism_class",
    "release",
    "__version__",
]

if TYPE_CHECKING:  # for type checkers and IDEs: the same names, imported eagerly
    from .corpus import load_corpus
    from .corpus.model import Corpus, CorpusStats, SourceInfo
    from .errors import DpsuError, InputError, ParameterError
    from .mechanisms import Calibration, Mechanism, Release, get_mechanism, list_mechanisms, mechanism_class


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'dpsu_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
