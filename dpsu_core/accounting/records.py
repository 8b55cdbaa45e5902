"""What the ledger store hands out and takes back: a corpus, a charge, a refusal, a kept release and a chain check
(plain records, no database), the one-line refusal, and the CSV of a kept release's items."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from ..errors import DpsuError
from .ledger import LedgerEntry, LedgerTotal, total


class BudgetRefused(DpsuError):
    """A spend that would pass the corpus's cap, or the analyst's own: nothing was recorded but the refusal, and no
    noise may be drawn. ``remaining_epsilon`` / ``remaining_delta``: what the binding cap leaves."""

    def __init__(
        self,
        message: str,
        *,
        corpus: str,
        requested_epsilon: float,
        requested_delta: float,
        remaining_epsilon: float,
        remaining_delta: float,
    ) -> None:
        super().__init__(message)
        self.corpus = corpus
        self.requested_epsilon = requested_epsilon
        self.requested_delta = requested_delta
        self.remaining_epsilon = remaining_epsilon
        self.remaining_delta = remaining_delta


@dataclass(frozen=True)
class Corpus:
    """A corpus the store knows: its cap, and how it is recognised (opaque bytes and a salted hash, both given by
    the caller; never raw ids or posts)."""

    id: int
    name: str
    epsilon_cap: float
    delta_cap: float
    fingerprint: bytes
    users_hash: str
    created_utc: str
    created_by: str


@dataclass(frozen=True)
class Charge:
    """A recorded spend: ``total`` is the corpus's total after it, ``remaining_*`` what the corpus's cap leaves,
    ``cost`` what these entries spend on their own (composed when first read); ``new_corpus``: the corpus was
    created by this charge, with the default cap (say so once)."""

    charge_id: str
    corpus: Corpus
    entries: tuple[LedgerEntry, ...]
    total: LedgerTotal
    remaining_epsilon: float
    remaining_delta: float
    new_corpus: bool

    @cached_property
    def cost(self) -> LedgerTotal:
        return total(compact(self.entries))

    def sentence(self) -> str:
        """One line for the tool that charged: the corpus's spend and what is left (and, once, that a new corpus
        got the default cap)."""
        c = self.corpus
        new = f"corpus {c.name!r} is new to the ledger: it gets the default cap; " if self.new_corpus else ""
        return new + (
            f"charged to corpus {c.name!r}: ε = {self.total.epsilon:.4g} of {c.epsilon_cap:g} spent, "
            f"ε = {shown_down(self.remaining_epsilon)} left (δ = {self.total.basic_delta:.2g} of {c.delta_cap:.2g})"
        )


@dataclass(frozen=True)
class Refusal:
    time_utc: str
    corpus: str
    actor: str
    tool: str
    why: str
    requested_epsilon: float
    requested_delta: float


@dataclass(frozen=True)
class KeptRelease:
    """A release's public output, kept so it can be handed back at no cost: its items and noisy counts, its
    calibration and report, and ``outputs``, the files it published by name (``KEPT_OUTPUTS``: "csv", the items'
    CSV as the release wrote it), as bytes."""

    id: int
    charge_id: str
    corpus_id: int
    request_key: str
    items: tuple[Any, ...]
    counts: tuple[float, ...] | None
    calibration: dict[str, Any]
    report: str
    created_utc: str
    outputs: dict[str, bytes] = field(default_factory=dict)


@dataclass(frozen=True)
class VerifyResult:
    """``ok``, or the first bad row: ``problem`` (one line), its corpus and sequence number (None when the problem
    is the chain's end or the corpus row)."""

    ok: bool
    checked: int
    problem: str = ""
    corpus: str | None = None
    seq: int | None = None


def shown_down(x: float) -> str:
    """A remaining budget for display, rounded down to 4 significant digits (never shows more than is left)."""
    if x <= 0:
        return "0"
    scale = 10 ** (3 - math.floor(math.log10(x)))
    return f"{math.floor(x * scale) / scale:.4g}"


def compact(entries: Sequence[LedgerEntry]) -> list[LedgerEntry]:
    """Identical configurations merged into one entry whose ``releases`` add up (every composition of
    ``ledger.total`` is a function of the configurations and their release counts: a k-fold composition is one
    self-composition), so 10,000 entries of a few configurations compose as a few."""
    first: dict[tuple, LedgerEntry] = {}
    count: dict[tuple, int] = {}
    for e in entries:
        key = (e.mechanism, e.label, e.epsilon, e.delta, e.noise, e.zcdp, e.laplace, e.teaching)
        first.setdefault(key, e)
        count[key] = count.get(key, 0) + e.releases
    return [e if e.releases == count[k] else replace(e, releases=count[k]) for k, e in first.items()]


def items_csv(kept: KeptRelease) -> bytes:
    """A kept release's items (n-grams as their words joined by spaces) and noisy counts, as CSV."""
    from ..outputs.export import neutralise_cell

    buf = io.StringIO()
    writer = csv.writer(buf, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n")
    writer.writerow(["item", "count"] if kept.counts is not None else ["item"])
    for i, item in enumerate(kept.items):
        text = neutralise_cell(" ".join(map(str, item)) if isinstance(item, list) else str(item))
        writer.writerow([text, kept.counts[i]] if kept.counts is not None else [text])
    return buf.getvalue().encode("utf-8")


def refusal(
    who: str,
    corpus: str,
    cap_e: float,
    cap_d: float,
    before: list[LedgerEntry],
    new: list[LedgerEntry],
    *,
    custodian: bool = False,
) -> BudgetRefused:
    """The one-line refusal: what the release would spend, what the binding cap leaves (composed here only: a
    recorded charge never pays for it)."""
    cost, now = total(compact(new)), total(before)
    rem_e, rem_d = max(0.0, cap_e - now.epsilon), max(0.0, cap_d - now.basic_delta)
    text = (
        f"refused: this release would spend ε = {cost.epsilon:.4g}, δ = {cost.basic_delta:.2g}; {who} has "
        f"ε = {shown_down(rem_e)} of {cap_e:g} left (δ = {rem_d:.2g} of {cap_d:.2g})"
        + ("; its custodian can raise the cap with 'dpsu corpus set-budget'" if custodian else "")
    )
    return BudgetRefused(text, corpus=corpus, requested_epsilon=cost.epsilon, requested_delta=cost.basic_delta,
                         remaining_epsilon=rem_e, remaining_delta=rem_d)  # fmt: skip
