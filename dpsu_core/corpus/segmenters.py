"""The word segmenters of the ``auto`` tokenizer, compiled first: which one each language uses, loading it
on first need (one instance per process), and its name and version for the notes and the report.

  language  segmenter (first installed wins)                          the pure-Python fall-back
  Chinese   rjieba (jieba-rs, Rust; jieba's dictionary, HMM on)        jieba (the same words)
  Japanese  fugashi (MeCab, C++) with unidic-lite                      SudachiPy + sudachidict_core, split mode C
  Thai      nlpo3 (PyThaiNLP's newmm in Rust) with PyThaiNLP's words   PyThaiNLP newmm (the same words)
  Korean    kiwipiepy (Kiwi, C++): morphemes of each word
  Khmer     khmer-nltk (a CRF)
  Lao       laonlp (newmm over its Lao dictionary)

Japanese: fugashi + unidic-lite segments about twice as fast as SudachiPy (``python -m benchmarks.run segment``
measures both in one run), so it comes first; its words are UniDic's short units where SudachiPy's mode C keeps
compounds whole. Burmese has no segmenter here: the PyPI ones need a compiler (pyidaungsu: fasttext) or fetch
their dictionary at run time (myword), so its words become character n-grams.

A segmenter is looked up with ``importlib.util.find_spec`` (no import) for the report, and imported only when
a post needs it (``load``): a file that holds no run of the script pays nothing for it. A segmenter found is kept
for the process; one not found is looked up again at the next corpus load (``look_again``), so an extra
installed while the app runs (``pip install 'dpsu[languages]'``) serves the next load without a restart.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from importlib.metadata import PackageNotFoundError, version

from ..errors import InputError, first_line


@dataclass(frozen=True)
class Candidate:
    name: str  # as the notes say it
    module: str  # imported to use it (found with find_spec for the report)
    packages: tuple[str, ...]  # PyPI distributions whose versions the report gives
    compiled: bool
    detail: str = ""  # what the notes add after the name and version

    def installed(self) -> bool:
        try:
            return all(
                importlib.util.find_spec(m) is not None for m in (self.module, *_EXTRA_MODULES.get(self.name, ()))
            )
        except ValueError:  # sys.modules holds None for it: hidden, as if not installed
            return False

    def label(self) -> str:
        versions = " with ".join(f"{p} {_version(p)}" for p in self.packages)
        return f"{versions}{' (' + self.detail + ')' if self.detail else ''}"


_EXTRA_MODULES = {"fugashi": ("unidic_lite",), "nlpo3": ("pythainlp",)}

CANDIDATES: dict[str, tuple[Candidate, ...]] = {
    "Chinese": (
        Candidate("rjieba", "rjieba", ("rjieba",), True, "jieba-rs, jieba's dictionary"),
        Candidate("jieba", "jieba", ("jieba",), False),
    ),
    "Japanese": (
        Candidate("fugashi", "fugashi", ("fugashi", "unidic-lite"), True, "MeCab, UniDic short units"),
        Candidate("sudachipy", "sudachipy", ("SudachiPy", "sudachidict_core"), False, "split mode C"),
    ),
    "Thai": (
        Candidate("nlpo3", "nlpo3", ("nlpo3",), True, "newmm in Rust, PyThaiNLP's dictionary"),
        Candidate("pythainlp", "pythainlp", ("pythainlp",), False, "newmm"),
    ),
    "Korean": (Candidate("kiwipiepy", "kiwipiepy", ("kiwipiepy",), True, "morphemes of each word"),),
    "Khmer": (Candidate("khmer-nltk", "khmernltk", ("khmer-nltk",), False),),
    "Lao": (Candidate("laonlp", "laonlp", ("laonlp",), False),),
}
LANGUAGES = tuple(CANDIDATES)
NO_SEGMENTER = {"Burmese": "no PyPI segmenter installs without a compiler or a download at run time"}


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:  # pragma: no cover - found by find_spec but not by its distribution name
        return "(version unknown)"


def chosen(language: str) -> Candidate | None:
    """The segmenter ``language`` uses: once ``load`` started it in this process, the one that runs (None when
    every candidate failed to start); before, the first installed candidate, without importing it."""
    if language in _loaded:
        seg = _loaded[language]
        return seg.candidate if seg is not None else None
    return next((c for c in CANDIDATES[language] if c.installed()), None)


@dataclass(frozen=True)
class Segmenter:
    language: str
    candidate: Candidate
    # run-level (Chinese, Japanese, Thai): a run of the script -> its words separated by single spaces;
    # word-level (Korean, Khmer, Lao): many words -> the pieces of each
    cut: Callable[[str], str] | None = None
    words: Callable[[list[str]], list[list[str]]] | None = None
    # run-level, when the segmenter cuts the runs of one text independently of each other (jieba: each block
    # of Han between other characters on its own): many runs -> their ``cut`` each with a space on both sides,
    # in one call
    batch: Callable[[list[str]], list[str]] | None = None
    # the same, over the bytes (``chinese.segment_rows``): many runs, one per line -> their words separated by
    # spaces, the line breaks kept
    lines: Callable[[str], str] | None = None
    # word-level with part-of-speech tags (Korean): many words -> the (piece, tag) pairs of each
    tagged: Callable[[list[str]], list[list[tuple[str, str]]]] | None = None

    # why the candidates before this one are not used (one failed to start: ``load``), for the notes
    failed: str = ""

    def describe(self) -> str:
        if self.failed:
            return f"{self.candidate.label()}; {self.failed}, so {self.candidate.name} ran instead"
        fallback = "" if self.candidate.compiled or len(CANDIDATES[self.language]) == 1 else _FALLBACK_NOTE
        return f"{self.candidate.label()}{fallback}"


_FALLBACK_NOTE = "; pure Python, the compiled segmenter is not installed: pip install 'dpsu[languages]'"

#: a short text of each language, segmented once when its segmenter loads: a broken install (a missing word list,
#: a library that panics) fails there, where the next candidate can take over, rather than inside a release
PROBES = {
    "Chinese": "我爱北京",
    "Japanese": "日本語の文",
    "Thai": "ภาษาไทยง่าย",
    "Korean": "학교에",
    "Khmer": "ខ្ញុំស្រឡាញ់",
    "Lao": "ສະບາຍດີ",
}


class SegmenterError(InputError):
    """A word segmenter failed while it segmented the text (after it had started): one line naming it."""


def _fatal(e: BaseException) -> bool:
    """Exceptions that are not a segmenter's failure: Ctrl-C and an exit pass through untouched. Anything else a
    segmenter raises, including a Rust panic (pyo3's ``PanicException`` derives from ``BaseException``, not
    ``Exception``), is its failure."""
    return isinstance(e, (KeyboardInterrupt, SystemExit, GeneratorExit))


def _guarded(language: str, name: str, fn: Callable | None) -> Callable | None:
    """``fn`` (a segmenter's callable) with any failure turned into one ``SegmenterError`` line."""
    if fn is None:
        return None

    def call(arg):
        try:
            return fn(arg)
        except BaseException as e:
            if _fatal(e) or isinstance(e, SegmenterError):
                raise
            raise SegmenterError(
                f"the {language} word segmenter {name} failed while segmenting the text ({first_line(e, 160, typed=True)}); reinstall "
                "it (pip install 'dpsu[languages]'), or choose --tokenizer fast or char-ngrams"
            ) from None

    return call


def _started(language: str, cand: Candidate) -> Segmenter:
    """``cand``'s segmenter made and tried once on ``PROBES``, its callables guarded (``_guarded``). A compiled one
    starts with the process's standard error held aside (``_held_stderr``): a Rust panic prints its own lines
    there before Python sees the exception, and the failure is said once, in the notes."""
    with _held_stderr() if cand.compiled else contextlib.nullcontext():
        seg = _MAKERS[cand.name](language, cand)
        if seg.cut is not None:
            seg.cut(PROBES[language])
        if seg.words is not None:
            seg.words([PROBES[language]])
    g = functools.partial(_guarded, language, cand.name)
    return replace(seg, cut=g(seg.cut), words=g(seg.words), batch=g(seg.batch), lines=g(seg.lines))


_loaded: dict[str, Segmenter | None] = {}
_failures: dict[str, str] = {}
# one lock per language: a segmenter that takes a second to load (Kiwi) does not hold up another language's
_locks = {language: threading.Lock() for language in CANDIDATES}
_prefetched: set[str] = set()


def _after_fork() -> None:  # a worker process forked while another thread held a lock must not wait for it
    global _locks
    _locks = {language: threading.Lock() for language in CANDIDATES}


os.register_at_fork(after_in_child=_after_fork)


def load(language: str) -> Segmenter | None:
    """The segmenter of ``language``, imported on first use; None when none is installed (until ``look_again``)."""
    if language in _loaded:
        return _loaded[language]
    with _locks[language]:
        if language not in _loaded:
            made, failed = None, []
            for cand in CANDIDATES[language]:
                try:
                    made = _started(language, cand)
                    break
                except ImportError as e:
                    if cand.installed():  # found, yet its import fails: broken, not missing
                        failed.append(f"{cand.name} failed to start ({first_line(e, 160, typed=True)})")
                except BaseException as e:  # a failure of its own code, a Rust panic included (``_fatal``)
                    if _fatal(e):
                        raise
                    failed.append(f"{cand.name} failed to start ({first_line(e, 160, typed=True)})")
            if made is not None and failed:
                made = replace(made, failed="; ".join(failed))
            _failures[language] = "; ".join(failed)
            _loaded[language] = made
        return _loaded[language]


@contextlib.contextmanager
def _held_stderr() -> Iterator[None]:
    """File descriptor 2 into a temporary file for the block: written back to it when the block succeeds, dropped
    when it fails (the failure is reported in one line instead). Without a usable descriptor 2, nothing is held."""
    import sys
    import tempfile

    saved = held_file = None
    try:
        if sys.stderr is not None:
            sys.stderr.flush()
        held_file = tempfile.TemporaryFile()  # noqa: SIM115 - closed by the with below
        saved = os.dup(2)
    except (OSError, ValueError):
        if held_file is not None:
            held_file.close()
        held_file = None
    if saved is None or held_file is None:
        yield
        return
    with held_file as held:
        os.dup2(held.fileno(), 2)
        ok = False
        try:
            yield
            ok = True
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            if ok:
                held.seek(0)
                text = held.read()
                if text:
                    os.write(2, text)


def failure(language: str) -> str:
    """Why the installed segmenters of ``language`` did not start (after ``load``), or ""."""
    return _failures.get(language, "")


def look_again() -> None:
    """Forget the segmenters not found (a corpus load starts): the next ``load`` looks for them afresh, past the
    import system's cached directory listings, so a package installed since is used. Found ones stay loaded."""
    missed = [language for language, seg in list(_loaded.items()) if seg is None]
    if not missed:
        return
    importlib.invalidate_caches()
    for language in missed:
        with _locks[language]:
            if _loaded.get(language, False) is None:
                del _loaded[language]
        _prefetched.discard(language)


def prefetch(language: str) -> None:
    """Start loading the segmenter of ``language`` in a background thread (the tokenizer found its script in a
    post and will need it after its kernel): its start-up overlaps the tokenizing instead of following it."""
    if language in _loaded or language in _prefetched:
        return
    _prefetched.add(language)
    threading.Thread(target=load, args=(language,), name=f"dpsu-load-{language}", daemon=True).start()


def forget() -> None:
    """Drop the loaded segmenters (tests that hide a package)."""
    for language in CANDIDATES:
        with _locks[language]:
            _loaded.pop(language, None)
            _failures.pop(language, None)
    _prefetched.clear()


def _rjieba(language: str, cand: Candidate) -> Segmenter:
    import rjieba

    def cut(run: str) -> str:
        return " ".join(rjieba.cut(run, True))

    def batch(runs: list[str]) -> list[str]:
        # one call on the runs between line breaks: jieba cuts each block of Han on its own and a line break is a
        # word of its own, so this is each run's cut (checked: any other outcome falls back to a call per run)
        done = " ".join(rjieba.cut("\n" + "\n".join(runs) + "\n", True)).split("\n")[1:-1]
        if len(done) != len(runs) or "".join(done).replace(" ", "") != "".join(runs):  # pragma: no cover
            return [cut(r) for r in runs]
        return done

    def lines(text: str) -> str:
        return " ".join(rjieba.cut(text, True))

    return Segmenter(language, cand, cut=cut, batch=batch, lines=lines)


def _jieba(language: str, cand: Candidate) -> Segmenter:
    import logging

    import jieba

    jieba.setLogLevel(logging.WARNING)  # no "Building prefix dict" lines on stderr
    jieba.initialize()
    return Segmenter(language, cand, cut=lambda run: " ".join(jieba.lcut(run, HMM=True)))


def _fugashi(language: str, cand: Candidate) -> Segmenter:
    import fugashi
    import unidic_lite

    args = f'-Owakati -r /dev/null -d "{unidic_lite.DICDIR}"'  # unidic-lite's dictionary, whatever else is installed
    local = threading.local()  # a MeCab tagger must not be used by two threads at once

    def cut(run: str) -> str:
        tagger = getattr(local, "tagger", None)
        if tagger is None:
            tagger = local.tagger = fugashi.GenericTagger(args)
        return tagger.parse(run)

    cut("日本")  # fail here, not in a worker, on a broken install
    return Segmenter(language, cand, cut=cut)


def _sudachi(language: str, cand: Candidate) -> Segmenter:
    from sudachipy import Dictionary, SplitMode

    dictionary = Dictionary(dict="core")
    local = threading.local()  # a SudachiPy tokenizer must not be used by two threads at once

    def cut(run: str) -> str:
        tok = getattr(local, "tok", None)
        if tok is None:
            tok = local.tok = dictionary.tokenizer(mode=SplitMode.C, fields=set())  # surfaces only
        return " ".join(m.surface() for m in tok.tokenize(run))

    return Segmenter(language, cand, cut=cut)


THAI_DICT_NAME = "dpsu-pythainlp-words_th"


def thai_dictionary() -> str:
    """PyThaiNLP's word list (the file its newmm reads), found without importing PyThaiNLP."""
    spec = importlib.util.find_spec("pythainlp")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("pythainlp is not installed")
    return os.path.join(list(spec.submodule_search_locations)[0], "corpus", "words_th.txt")


def _nlpo3(language: str, cand: Candidate) -> Segmenter:
    import nlpo3

    message, ok = nlpo3.load_dict(thai_dictionary(), THAI_DICT_NAME)
    if not ok and "already" not in message:  # pragma: no cover - a broken install
        raise ImportError(f"nlpo3 could not load PyThaiNLP's dictionary: {message}")
    return Segmenter(language, cand, cut=lambda run: " ".join(nlpo3.segment(run, THAI_DICT_NAME)))


def _pythainlp(language: str, cand: Candidate) -> Segmenter:
    from pythainlp.tokenize import word_tokenize

    return Segmenter(
        language, cand, cut=lambda run: " ".join(word_tokenize(run, engine="newmm", keep_whitespace=False))
    )


def _kiwi(language: str, cand: Candidate) -> Segmenter:
    from kiwipiepy import Kiwi

    kiwi = Kiwi(num_workers=min(2, os.cpu_count() or 1), load_typo_dict=False, load_multi_dict=False)

    def tagged(batch: list[str]) -> list[list[tuple[str, str]]]:
        return [[(t.form, t.tag) for t in toks] for toks in kiwi.tokenize(batch)]

    def words(batch: list[str]) -> list[list[str]]:
        return [[form for form, _ in toks] for toks in tagged(batch)]

    words(["학교에"])  # Kiwi reads its model on the first call: here (in a prefetch, beside the tokenizing)
    return Segmenter(language, cand, words=words, tagged=tagged)


def _khmer(language: str, cand: Candidate) -> Segmenter:
    import logging

    from khmernltk import word_tokenize

    logging.getLogger("khmer-nltk").setLevel(logging.WARNING)  # it logs each model load to stderr at INFO
    word_tokenize("ខ្ញុំ")  # the model is read on the first call: here, not inside a worker
    return Segmenter(language, cand, words=lambda batch: [[w for w in word_tokenize(t) if w.strip()] for t in batch])


def _lao(language: str, cand: Candidate) -> Segmenter:
    from laonlp.tokenize import word_tokenize

    return Segmenter(language, cand, words=lambda batch: [[w for w in word_tokenize(t) if w.strip()] for t in batch])


_MAKERS: dict[str, Callable[[str, Candidate], Segmenter]] = {
    "rjieba": _rjieba,
    "jieba": _jieba,
    "fugashi": _fugashi,
    "sudachipy": _sudachi,
    "nlpo3": _nlpo3,
    "pythainlp": _pythainlp,
    "kiwipiepy": _kiwi,
    "khmer-nltk": _khmer,
    "laonlp": _lao,
}
