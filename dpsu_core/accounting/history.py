"""The releases of one session, as first-class objects: every page reads and appends to one ``ReleaseHistory``.

A ``ReleaseRecord`` is one private release with everything needed to name it, export it and redo it: the corpus
it ran on (``CorpusRef``: id, name, the data's digest, the file a command export reads and how it was read), the
mechanism, its parameters and calibration, what it cost, when, the page it came from, and its private output.
A release made on one page never replaces another page's: the Release page, Export and the report default to the
last release made on the Release page and name which release they show; any other can be picked by its number.

Every spend on the private corpus is in the history too, as the ledger counts it: a ``SpendGroup`` is one action
(a release, a histogram fill, a comparison, a neighbouring-corpora run) with the number of releases it spent and
the numbers of those whose output is kept (exportable); a release that failed part-way, or a neighbouring-corpora
run (which keeps release rates, not releases), spent without an exportable output, and its group says why.
``ReleaseHistory.spent_releases`` is the ledger's count, group by group.

Nothing here looks at data beyond the release itself; the history is held in memory for one session.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from ..corpus import LoadOptions
from ..errors import ParameterError
from ..mechanisms import Calibration, Release
from .ledger import LedgerTotal, cost_of

RELEASE_PAGE = "Release"  # the page whose last release Export and the report show by default


@dataclass(frozen=True)
class CorpusRef:
    """Which corpus a release ran on. ``digest`` is the data's identity in the ledger (the same file loaded twice is
    the same users); ``private`` is False for an exploration corpus (nothing spent there)."""

    id: int
    name: str
    digest: str
    private: bool
    input_name: str = ""  # the file a command export reads ("" for a simulated or exploration corpus)
    options: LoadOptions = field(default_factory=LoadOptions)


@dataclass(frozen=True)
class PublicRef:
    """The public corpus file a release took its item frequencies from (GW-KT): its name and how it was read."""

    name: str
    options: LoadOptions | None = None


@dataclass(frozen=True)
class ReleaseRecord:
    """One release of the session (its number is its name: #1, #2, ...)."""

    number: int
    corpus: CorpusRef
    page: str
    release: Release  # the private output (with its calibration and seed)
    params: dict[str, float | int | str | bool | None]  # the mechanism's parameters beyond ε and δ (scalars)
    time_utc: str = field(default_factory=lambda: datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S"))
    public: PublicRef | None = None  # the uploaded public corpus it used (None: none, or the built-in list)
    batch: str = ""  # the batch it belongs to (e.g. a comparison's runs): never a page's default release
    #: what the session had spent on its corpus once this release was entered (``ledger.ledger_summary``, taken
    #: when it was added; None off the private corpus): its report states the account AT this release, never later
    spent: dict | None = None

    @property
    def calibration(self) -> Calibration:
        return self.release.calibration

    @property
    def mechanism(self) -> str:
        return self.release.calibration.mechanism

    @property
    def cost(self) -> LedgerTotal:
        """What this release costs by its calibration (``ledger.cost_of``), on whichever corpus it ran: an exploration
        release is not in the ledger, so a total of the session's spend counts only the records with ``corpus.private``."""
        return cost_of(self.calibration, 1)

    @property
    def seeded(self) -> bool:
        return self.release.seeded

    def title(self) -> str:
        """ "#2 · Policy Gaussian, ε = 3, δ = 1e-06 on posts.csv (Release page, 12:03:04 UTC)"."""
        from ..mechanisms.item_counts import counts_of

        cal = self.calibration
        where = self.corpus.name + ("" if self.corpus.private else " (exploration)")
        seed = ", fixed seed" if self.seeded else ""
        cc = counts_of(cal)  # with noisy counts: the whole (epsilon, delta), the counts' share named
        budget = (
            f"ε = {cal.epsilon:g}, δ = {cal.delta:.2g}"
            if cc is None
            else f"with noisy counts, ε = {cc.total_epsilon:g}, δ = {cc.total_delta:.2g} ({cc.share:g} on the counts)"
        )
        return (
            f"#{self.number} · {cal.label}{'' if cc is not None else ','} {budget}{seed} on {where} "
            f"({self.page} page, {self.time_utc[11:]} UTC)"
        )


NOT_KEPT_FAILED = "it failed part-way: its budget is spent, but there is no output to export"
NOT_KEPT_NEIGHBOURS = (
    "a neighbouring-corpora run keeps only how often each of the user's items was released (the release rates), "
    "not the releases themselves: there is nothing to export"
)


@dataclass
class SpendGroup:
    """One action that spent on a private corpus: ``releases`` releases (as the ledger counts them), of which
    ``members`` (history numbers) have a kept, exportable output; ``not_kept`` says why the others have none."""

    number: int
    action: str  # what the user did, e.g. "Compare: 2 mechanisms × 3 runs"
    page: str
    corpus: CorpusRef
    releases: int = 0
    members: list[int] = field(default_factory=list)
    not_kept: str = NOT_KEPT_FAILED
    time_utc: str = field(default_factory=lambda: datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S"))

    @property
    def missing(self) -> int:
        """Releases of the group with no exportable output."""
        return self.releases - len(self.members)

    def title(self) -> str:
        n = f"{self.releases} release{'s' if self.releases != 1 else ''}"
        kept = "" if self.missing == 0 else f", {len(self.members)} exportable"
        return f"{self.action} · {n}{kept} ({self.page} page, {self.time_utc[11:]} UTC)"


def scalar_params(params: dict[str, object]) -> dict[str, float | int | str | bool | None]:
    """The parameters worth keeping with a release: numbers, strings and flags (a public corpus object is named
    by the calibration's description instead)."""
    return {k: v for k, v in params.items() if v is None or isinstance(v, (bool, int, float, str))}


class ReleaseHistory:
    """The session's releases, in the order they were made, on every corpus."""

    def __init__(self) -> None:
        self.records: list[ReleaseRecord] = []
        self.groups: list[SpendGroup] = []

    def add(
        self,
        release: Release,
        corpus: CorpusRef,
        page: str,
        params: dict[str, object] | None = None,
        public: PublicRef | None = None,
        *,
        group: SpendGroup | None = None,
        batch: str = "",
        spent: dict | None = None,
    ) -> ReleaseRecord:
        """A release with its output; ``group``: the spend it came from (its output is then kept in the group);
        ``spent``: the ledger's summary on its corpus at this release (``ReleaseRecord.spent``)."""
        rec = ReleaseRecord(
            len(self.records) + 1,
            corpus,
            page,
            release,
            scalar_params(dict(params or {})),
            public=public,
            batch=batch,
            spent=spent,
        )
        self.records.append(rec)
        if group is not None:
            group.members.append(rec.number)
        return rec

    def begin(self, action: str, page: str, corpus: CorpusRef, not_kept: str = NOT_KEPT_FAILED) -> SpendGroup:
        """A new spend group (releases are counted into it with ``spend`` as they are attempted)."""
        g = SpendGroup(len(self.groups) + 1, action, page, corpus, not_kept=not_kept)
        self.groups.append(g)
        return g

    @staticmethod
    def spend(group: SpendGroup, releases: int = 1) -> None:
        """``releases`` more releases of ``group`` attempted (and entered in the ledger)."""
        group.releases += int(releases)

    def groups_on(self, digest: str) -> list[SpendGroup]:
        """The spend groups on the private corpus with this ledger key (every load of the same data)."""
        return [g for g in self.groups if g.corpus.digest == digest and g.corpus.private and g.releases > 0]

    def spent_releases(self, digest: str) -> int:
        """How many releases spent on the private corpus with this ledger key: the ledger's count."""
        return sum(g.releases for g in self.groups_on(digest))

    def __len__(self) -> int:
        return len(self.records)

    def get(self, number: int) -> ReleaseRecord:
        if not 1 <= number <= len(self.records):
            raise ParameterError(f"no release #{number} in this session (it holds {len(self.records)})")
        return self.records[number - 1]

    def on_corpus(self, corpus_id: int) -> list[ReleaseRecord]:
        return [r for r in self.records if r.corpus.id == corpus_id]

    def last(self, corpus_id: int | None = None, page: str | None = None) -> ReleaseRecord | None:
        """The newest release (on that corpus, from that page)."""
        for r in reversed(self.records):
            if r.batch:
                continue  # a batch member (a comparison's run) is picked on Export, never a default
            if (corpus_id is None or r.corpus.id == corpus_id) and (page is None or r.page == page):
                return r
        return None

    def default(self, corpus_id: int | None = None) -> ReleaseRecord | None:
        """The release shown and exported by default: the last made on the Release page (on that corpus), else the
        last made anywhere (on that corpus)."""
        return self.last(corpus_id, RELEASE_PAGE) or self.last(corpus_id)

    def default_on(self, corpus: CorpusRef, *, same_file: bool = False) -> ReleaseRecord | None:
        """``default`` on exactly this corpus: the same load (its id, the file's digest and name, how it was read),
        never a release made on another file, nor on an earlier load whose id a later one reuses. ``same_file``:
        failing that, the default on an earlier load of the same file read the same way (only the load differs)."""
        found = self._default_where(lambda c: c == corpus)
        if found is None and same_file:
            file = replace(corpus, id=0)
            found = self._default_where(lambda c: replace(c, id=0) == file)
        return found

    def _default_where(self, on: Callable[[CorpusRef], bool]) -> ReleaseRecord | None:
        """The last release on a corpus ``on`` accepts made on the Release page, else the last (never a batch's)."""
        for page in (RELEASE_PAGE, None):
            for r in reversed(self.records):
                if not r.batch and on(r.corpus) and (page is None or r.page == page):
                    return r
        return None

    def latest_by_mechanism(self, corpus_id: int) -> dict[str, ReleaseRecord]:
        """The newest release of each mechanism on the corpus (the Histogram fill page shows them side by side)."""
        out: dict[str, ReleaseRecord] = {}
        for r in self.on_corpus(corpus_id):
            if not r.batch:
                out[r.mechanism] = r
        return out
