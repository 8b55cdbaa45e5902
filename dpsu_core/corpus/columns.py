"""Which columns hold the user and the text, whether the first row is a header, and checks on the choice.

The privacy unit is the user: nothing here picks a user column silently. A column is guessed only from
its *name* (one of ``USER_COLUMN_NAMES`` / ``TEXT_COLUMN_NAMES``, case-insensitive); an unnamed column
(empty, ``Unnamed: N``, or a bare position of a header-less file) is never guessed, and when no name
fits the caller must choose (the CLI refuses naming the columns and the flags; the app asks).

Also here: the header decision from the first rows (``detect_header``), per-column facts
(``column_facts``: distinct values, share of empty cells, mean length) and the sanity checks on a
choice (``column_warnings``, ``load_warnings``). All of them describe the raw data: NOT private.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import ColumnError, ParameterError, first_line
from ..wording import opt

USER_COLUMN_NAMES: tuple[str, ...] = (
    "author_id",
    "author",
    "user",
    "user_id",
    "userid",
    "username",
    "screen_name",
    "customer_id",
    "sender",
    "from",
)
TEXT_COLUMN_NAMES: tuple[str, ...] = (
    "text",
    "body",
    "content",
    "message",
    "review",
    "comment",
    "tweet",
    "clean_text",
    "post",
)
_KNOWN = frozenset(USER_COLUMN_NAMES + TEXT_COLUMN_NAMES)
_UNNAMED = re.compile(r"(?i)^(?:unnamed:\s*\d+(?:_level_\d+)?|\d+|)$")
_NUMBER = re.compile(r"^[-+]?(?:\d+(?:[.,]\d+)*|\.\d+)(?:[eE][-+]?\d+)?$")
_NUMBER_RE2 = r"^\s*[-+]?(?:\d+(?:[.,]\d+)*|\.\d+)(?:[eE][-+]?\d+)?\s*$"

# Thresholds of the sanity checks (issue 10).
MIN_TEXT_DISTINCT = 20
MOSTLY = 0.5  # "mostly numbers": more than half of the non-empty cells
MAX_DROPPED_SHARE = 0.5
MAX_USER_TOKEN_SHARE = 0.10
# A user column reads like a category (a label, a company, a stock), not people, when ...
FEW_USERS = 20  # ... it has at most this many distinct values ...
ROWS_PER_FEW_USER = 50  # ... and at least this many rows per value, ...
ROWS_PER_CATEGORY = 100  # ... or, whatever the number of values, at least this many rows per value on average, ...
LARGEST_USER_SHARE = MAX_USER_TOKEN_SHARE  # ... or its largest value holds at least this share of the rows ...
LARGEST_USER_ROWS = ROWS_PER_CATEGORY  # ... and at least this many rows (a small file's few users are no category)


def norm(name: str) -> str:
    return str(name).strip().lower()


def is_unnamed(name) -> bool:
    """Empty, ``Unnamed: N`` (pandas' name for a nameless index column) or a bare position: never guessed."""
    return bool(_UNNAMED.match(str(name).strip()))


def _hits(columns: Sequence[str], names: tuple[str, ...], skip: int | None = None) -> list[int]:
    """Positions of the columns with the best-ranked known name present (several: the name is shared)."""
    for want in names:
        hits = [i for i, c in enumerate(columns) if i != skip and not is_unnamed(c) and norm(c) == want]
        if hits:
            return hits
    return []


def _best(columns: Sequence[str], names: tuple[str, ...], skip: int | None = None) -> int | None:
    hits = _hits(columns, names, skip)
    return hits[0] if len(hits) == 1 else None


def guess_columns(columns) -> tuple[str | None, str | None]:
    """The user and text columns by their names (``None`` where no name fits, or several columns share it)."""
    cols = [str(c) for c in columns]
    u = _best(cols, USER_COLUMN_NAMES)
    t = _best(cols, TEXT_COLUMN_NAMES, skip=u)
    return (cols[u] if u is not None else None), (cols[t] if t is not None else None)


AVAILABLE_CHARS = 180  # the column list's share of a message (errors.MAX_MESSAGE_CHARS), in whole entries


#: words in a column's name that make it a plausible user (or text) column, ranked after the known names
_USER_WORDS = ("user", "author", "name", "id", "sender", "account", "handle", "customer", "email", "from")
_TEXT_WORDS = ("text", "body", "content", "message", "review", "comment", "tweet", "post", "title", "note")


def plausibility(name: str, role: str) -> int:
    """How plausible a ``role`` ("user" or "text") column a name is: 0 a known name, 1 a name holding one of the
    role's words (``name``, ``user_name``, ``id`` ...), 2 any other name, 3 an unnamed column."""
    if is_unnamed(name):
        return 3
    known, words = (USER_COLUMN_NAMES, _USER_WORDS) if role == "user" else (TEXT_COLUMN_NAMES, _TEXT_WORDS)
    n = norm(name)
    if n in known:
        return 0
    return 1 if any(w in re.split(r"[^a-z0-9]+|(?<=[a-z])(?=id$)", n) or n.endswith(w) for w in words) else 2


def available(columns: Sequence[str], first_row: Sequence[str] | None = None, role: str | None = None) -> str:
    """The columns as a list for a message: position, name, and for a header-less file the first value. With a
    ``role`` ("user" or "text") the named columns are listed most plausible first (``plausibility``), so the one
    the reader needs is shown even when the list is cut."""
    if first_row is not None:
        parts = [f"{i} (first value {_clip(v)!r})" for i, v in enumerate(first_row)]
    else:
        order = list(range(len(columns)))
        if role is not None:
            order.sort(key=lambda i: plausibility(str(columns[i]), role))
        parts = [f"{i}: {_clip(columns[i])!r}" for i in order]
    shown: list[str] = []
    used = 0
    for part in parts:  # whole entries only, so the message's own cap never falls mid-entry
        if used + len(part) + 2 > AVAILABLE_CHARS and shown:
            break
        shown.append(part)
        used += len(part) + 2
    if len(shown) < len(parts):
        shown.append(f"… and {len(parts) - len(shown)} more")
    return ", ".join(shown) or "none"


def label(columns: Sequence[str], i: int) -> str:
    """A column's name for messages; an unnamed one by its position."""
    name = str(columns[i]).strip()
    return name if name else f"(unnamed column {i})"


def _clip(s, n: int = 30) -> str:
    s = str(s)
    return s if len(s) <= n else s[: n - 1] + "…"


def _is_position(spec) -> bool:
    return (isinstance(spec, (int, np.integer)) and not isinstance(spec, bool)) or (
        isinstance(spec, str) and spec.strip().isdigit()
    )


def resolve(spec, columns: Sequence[str], role: str, has_header: bool, first_row=None) -> int:
    """Index of the column ``spec`` (a name, a position, or a string of digits) among ``columns``."""
    key = "user_col" if role == "user" else "text_col"
    avail = available(columns, None if has_header else first_row, role)
    if isinstance(spec, str):
        if has_header:
            hits = [i for i, c in enumerate(columns) if c == spec] or [
                i for i, c in enumerate(columns) if norm(c) == norm(spec)
            ]
            if len(hits) == 1:
                return hits[0]
            if len(hits) > 1:
                raise ColumnError(
                    f"the {role} column {spec!r} is ambiguous: {len(hits)} columns have that name; "
                    f"give {opt(key)} by position instead (available: {avail})"
                )
        if not spec.strip().isdigit():
            if not has_header:
                raise ColumnError(
                    f"the file has no header row, so choose {opt(key)} by position (0, 1, ...), "
                    f"not the name {spec!r}; available: {avail}"
                )
            raise ColumnError(
                f"no {role} column named {spec!r}; choose {opt(key)} among the available columns: {avail}"
            )
    elif not _is_position(spec):
        raise ColumnError(
            f"{opt(key)} must be a column name or a position (0, 1, ...), got {spec!r}; available: {avail}"
        )
    pos = int(spec)
    if 0 <= pos < len(columns):
        return pos
    raise ColumnError(f"the {role} column position {pos} is out of range; the file has {len(columns)} columns: {avail}")


def column_spec(columns: Sequence[str], i: int | None, has_header: bool | None) -> str | int | None:
    """How to name column ``i`` so that ``resolve`` (the CLI's --user-col/--text-col included) finds it again:
    its header name when the file has a header and that name (not blank) is the column's alone, else its
    position. None stays None."""
    if i is None:
        return None
    name = str(columns[i])
    if has_header is not False and name.strip() and sum(c == name for c in columns) == 1:
        return name
    return int(i)


@dataclass(frozen=True)
class ColumnChoice:
    """Positions of the chosen columns (``user`` None: each row is its own user) and how they were chosen."""

    user: int | None
    text: int
    guessed: bool
    notes: tuple[str, ...] = ()


def choose_columns(
    columns: Sequence[str],
    user_col,
    text_col,
    has_header: bool,
    *,
    row_is_user: bool = False,
    first_row: Sequence[str] | None = None,
) -> ColumnChoice:
    """The user and text columns: as given, or guessed from their names; a ColumnError naming the columns
    and the options when a column cannot be told (never a guess by position)."""
    if row_is_user and user_col is not None:
        raise ColumnError(
            f"{opt('row_is_user')} and {opt('user_col')} exclude each other: either each row is its own user, "
            "or a column holds the user ids; drop one of them"
        )
    guessed = []
    shown = None if has_header else first_row
    u: int | None = None
    if user_col is not None:
        u = resolve(user_col, columns, "user", has_header, first_row)
    elif not row_is_user:
        u = _guess(columns, USER_COLUMN_NAMES, "user", has_header, available(columns, shown, "user"))
        guessed.append(f"user = {columns[u]!r}")
    if text_col is not None:
        t = resolve(text_col, columns, "text", has_header, first_row)
    else:
        t = _guess(columns, TEXT_COLUMN_NAMES, "text", has_header, available(columns, shown, "text"), skip=u)
        guessed.append(f"text = {columns[t]!r}")
    if u == t:
        raise ColumnError(
            f"the user and text columns are the same column ({_clip(columns[t])!r}); choose two different columns"
        )
    notes: tuple[str, ...] = ()
    if guessed:
        notes = (f"columns guessed from their names: {', '.join(guessed)}; choose others if this is wrong",)
    return ColumnChoice(u, t, bool(guessed), notes)


def _guess(columns, names, role: str, has_header: bool, avail: str, skip: int | None = None) -> int:
    hits = _hits(columns, names, skip) if has_header else []
    if len(hits) == 1:
        return hits[0]
    key = "user_col" if role == "user" else "text_col"
    if hits:
        raise ColumnError(
            f"several columns are named {columns[hits[0]]!r} (positions {', '.join(map(str, hits))}); "
            f"choose {opt(key)} by position (columns: {avail})"
        )
    raise ColumnError(_cannot_tell(role, has_header, avail))


def _cannot_tell(role: str, has_header: bool, avail: str) -> str:
    key = "user_col" if role == "user" else "text_col"
    names = USER_COLUMN_NAMES if role == "user" else TEXT_COLUMN_NAMES
    if not has_header:
        why = f"the file has no header row, so columns go by position 0, 1, ...; choose {opt('header')} if its first row names the columns"
    else:
        why = f"no column is named {', '.join(names)}"
    extra = f", or {opt('row_is_user')} if each row is one person's" if role == "user" else ""
    what = "user ids" if role == "user" else "texts"
    return f"cannot tell which column holds the {what} ({why}); choose {opt(key)}{extra} (columns: {avail})"


# ---- header ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class HeaderDecision:
    has_header: bool
    reason: str  # one sentence saying which way it went and why
    detected: bool = True  # False: given by the caller


_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*"
_DATE = re.compile(
    r"(?i)^(?:"
    r"\d{4}-\d{1,2}-\d{1,2}(?:[ T]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(?:\s*(?:z|[+-]\d{2}:?\d{2}|[a-z]{3,4}))?"  # ISO
    r"|\d{1,2}[/.]\d{1,2}[/.]\d{2,4}(?:,?\s+\d{1,2}:\d{2}(?::\d{2})?(?:\s*[ap]m)?)?"  # 24/02/2015 11:35
    r"|(?:[a-z]{3},?\s+)?" + _MONTH + r"\s+\d{1,2},?\s+(?:\d{1,2}:\d{2}(?::\d{2})?\s+)?(?:[a-z]{3,4}\s+)?\d{4}"
    r"(?:\s+\d{1,2}:\d{2}(?::\d{2})?)?"  # Mon Apr 06 22:19:45 PDT 2009, Apr 6, 2009
    r"|\d{1,2}\s+" + _MONTH + r"\s+\d{4}(?:\s+\d{1,2}:\d{2}(?::\d{2})?)?"  # 6 April 2009
    r")$"
)
_KIND_WORDS = {"number": ("a number", "numbers"), "date": ("a date", "dates"), "text": ("a sentence", "sentences")}


def cell_kind(value) -> str:
    """empty, number, date (a date or a time stamp), word (one short token) or text (has spaces, or is long)."""
    s = str(value).strip()
    if not s:
        return "empty"
    if _NUMBER.match(s):
        return "number"
    if _DATE.match(s):
        return "date"
    if len(s) > 40 or any(ch.isspace() for ch in s):
        return "text"
    return "word"


def detect_header(rows: Sequence[Sequence[str]]) -> HeaderDecision:
    """Is the first of ``rows`` (the file's first rows, as parsed) a header?

    A header row names columns (a known column name decides at once); it has no numbers where the rows
    below have them, and its cells differ in kind from the column below (a word above numbers or above
    sentences). A first row whose cells are of the same kind as the column below (numbers above numbers,
    sentences above sentences) is data. Without evidence either way the first row is read as a header.
    """
    if not rows:
        return HeaderDecision(True, "the file is empty")
    first, body = [str(c) for c in rows[0]], [list(map(str, r)) for r in rows[1:]]
    known = [c for c in first if norm(c) in _KNOWN]
    if known:
        return HeaderDecision(
            True,
            f"the first row is read as a header: {', '.join(repr(_clip(c)) for c in known)} "
            f"{'is a column name' if len(known) == 1 else 'are column names'}",
        )
    header_votes: list[str] = []
    data_votes: list[str] = []
    for j, cell in enumerate(first):
        below = [cell_kind(r[j]) for r in body if j < len(r)]
        below = [k for k in below if k != "empty"]
        if not below:
            continue
        major, n = Counter(below).most_common(1)[0]
        if n < 0.8 * len(below) or major == "word":
            continue  # a mixed column, or names above names: no evidence
        kind = cell_kind(cell)
        if kind == major:
            data_votes.append(f"{_clip(cell)!r} ({_KIND_WORDS[kind][0]}) in column {j}")
        elif major in ("number", "date") or kind in ("word", "empty"):
            header_votes.append(f"{_clip(cell)!r} in column {j} above {_KIND_WORDS[major][1]}")
    if len(data_votes) > len(header_votes):
        return HeaderDecision(
            False,
            "no header row: the first row holds data of the same kind as the rows below ("
            + "; ".join(data_votes[:3])
            + f"); choose {opt('header')} if it names the columns",
        )
    if header_votes:
        return HeaderDecision(
            True,
            "the first row is read as a header: its cells differ from the rows below ("
            + "; ".join(header_votes[:3])
            + f"); choose {opt('no_header')} if it is data",
        )
    return HeaderDecision(
        True,
        "the first row is read as a header (its content does not tell either way); "
        f"choose {opt('no_header')} if it is data",
    )


# ---- facts and checks -----------------------------------------------------------------------


@dataclass(frozen=True)
class ColumnFacts:
    """Raw facts about one column (NOT private)."""

    name: str
    rows: int
    distinct: int
    empty_share: float
    mean_length: float  # characters, over non-empty cells
    numeric_share: float  # share of non-empty cells that are numbers

    def describe(self, role: str = "") -> str:
        lead = f"{role} column {self.name!r}" if role else f"column {self.name!r}"
        return (
            f"{lead}: {self.distinct:,} distinct values in {self.rows:,} rows, "
            f"{100 * self.empty_share:.1f}% empty, mean length {self.mean_length:.1f} characters"
        )


def _as_strings(values) -> pa.Array:
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
        values = pc.cast(values, pa.string())
    return values


def _present(values: pa.Array) -> pa.Array:
    """The non-empty cells, trimmed."""
    trimmed = pc.utf8_trim_whitespace(values)
    lengths = pc.utf8_length(trimmed)
    # length > 0 and not null, without Python scalars (pyarrow would import pandas to convert them)
    return trimmed.filter(pc.and_kleene(pc.cast(lengths, pa.bool_()), pc.is_valid(lengths)))


def column_facts(values, name: str) -> ColumnFacts:
    """Distinct values, share of empty cells and mean length of a column (Arrow kernels, no Python per row)."""
    values = _as_strings(values)
    n = len(values)
    present = _present(values)
    m = len(present)
    mean_len = float(pc.mean(pc.utf8_length(present)).as_py() or 0.0) if m else 0.0
    numeric = int(pc.sum(pc.match_substring_regex(present, _NUMBER_RE2)).as_py() or 0) if m else 0
    return ColumnFacts(
        name=str(name),
        rows=n,
        distinct=int(pc.count_distinct(present).as_py()) if m else 0,
        empty_share=(n - m) / n if n else 0.0,
        mean_length=mean_len,
        numeric_share=numeric / m if m else 0.0,
    )


@dataclass(frozen=True)
class SanityWarning:
    """A likely mistake in the choice of columns or options, with the fix. Raw-data diagnostic: NOT private."""

    code: str
    message: str
    fix: str

    def __str__(self) -> str:
        return f"{self.message} — {self.fix}"


def reads_like_category(distinct: int, rows: int, largest: int) -> bool:
    """Whether a user column of ``distinct`` values over ``rows`` non-empty rows, the most frequent value on
    ``largest`` of them, reads like a category rather than the people who wrote the rows (judged before loading,
    on the column alone)."""
    if distinct < 1 or rows < 1:
        return False
    few = distinct <= FEW_USERS and rows >= ROWS_PER_FEW_USER * distinct
    dense = rows >= ROWS_PER_CATEGORY * distinct
    heavy = largest >= LARGEST_USER_ROWS and largest >= LARGEST_USER_SHARE * rows
    return few or dense or heavy


def _largest_count(values: pa.Array) -> int:
    """Rows of the most frequent non-empty value (trimmed, as ``column_facts`` counts them)."""
    present = _present(values)
    if not len(present):
        return 0
    return int(pc.max(pc.value_counts(present).field("counts")).as_py())


def _row_index(users: pa.Array, facts: ColumnFacts) -> str | None:
    """'0..n-1' or '1..n' when the column holds exactly these numbers (each once): a row number, not a person."""
    if facts.rows < 2 or facts.empty_share > 0 or facts.numeric_share < 1.0 or facts.distinct != facts.rows:
        return None
    try:
        ints = pc.cast(pc.utf8_trim_whitespace(users), pa.int64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    lo, hi = (v.as_py() for v in pc.min_max(ints).values())
    if lo in (0, 1) and hi == lo + facts.rows - 1:
        return "0..n-1" if lo == 0 else "1..n"
    return None


def column_warnings(
    users, texts, user_name: str | None, text_name: str | None, *, sample_note: str = ""
) -> tuple[list[ColumnFacts], list[SanityWarning]]:
    """Facts of the chosen columns and the checks that need only them (``users`` None: each row is a user)."""
    facts: list[ColumnFacts] = []
    warns: list[SanityWarning] = []
    where = f" {sample_note}" if sample_note else ""
    if users is not None:
        users = _as_strings(users)
        uf = column_facts(users, user_name or "user")
        facts.append(uf)
        if uf.rows >= 2 and uf.distinct == uf.rows - round(uf.empty_share * uf.rows) and uf.distinct > 1:
            warns.append(
                SanityWarning(
                    "user_unique",
                    f"the user column {uf.name!r} has a different value on every row{where} ({uf.distinct:,} rows): "
                    "each row will be a user: is that the privacy unit you mean?",
                    f"if one person wrote several rows, choose the column with their id as {opt('user_col')}; "
                    f"if each row really is one person, choose {opt('row_is_user')}",
                )
            )
        present = uf.rows - round(uf.empty_share * uf.rows)
        largest = _largest_count(users) if present else 0
        if reads_like_category(uf.distinct, present, largest):
            warns.append(
                SanityWarning(
                    "user_few_values",
                    f"the user column {uf.name!r} has only {uf.distinct:,} distinct values over {present:,} "
                    f"rows{where} ({present / uf.distinct:,.0f} rows per value on average, the largest holds "
                    f"{largest / present:.0%} of the rows): that reads like a category (a label, a company, a "
                    "language), not the people who wrote the rows; the release protects each value as one person",
                    f"choose the column with the writer's id as {opt('user_col')}, or {opt('row_is_user')} when "
                    f"there is none; if these really are {uf.distinct:,} people, keep it",
                )
            )
        span = _row_index(users, uf)
        if span:
            warns.append(
                SanityWarning(
                    "user_row_index",
                    f"the user column {uf.name!r} looks like a row index (the numbers {span}, once each){where}",
                    f"choose the column that holds the author's id as {opt('user_col')}",
                )
            )
    tf = column_facts(texts, text_name or "text")
    facts.append(tf)
    if tf.rows >= MIN_TEXT_DISTINCT and tf.distinct < MIN_TEXT_DISTINCT:
        warns.append(
            SanityWarning(
                "text_few_values",
                f"the text column {tf.name!r} has only {tf.distinct} distinct values{where}: "
                "it looks like a label, not posts",
                f"choose the column that holds the posts as {opt('text_col')}",
            )
        )
    if tf.numeric_share > MOSTLY:
        warns.append(
            SanityWarning(
                "text_numbers",
                f"the text column {tf.name!r} holds mostly numbers ({100 * tf.numeric_share:.0f}% of its cells){where}",
                f"choose the column that holds the posts as {opt('text_col')}",
            )
        )
    return facts, warns


def load_warnings(rows_read: int, rows_dropped: int, tokens_per_user: np.ndarray) -> list[SanityWarning]:
    """Checks after tokenizing: more than half of the rows dropped; one user holding > 10% of all tokens."""
    warns = []
    if rows_read and rows_dropped > MAX_DROPPED_SHARE * rows_read:
        warns.append(
            SanityWarning(
                "rows_dropped",
                f"{rows_dropped:,} of {rows_read:,} rows ({100 * rows_dropped / rows_read:.0f}%) were dropped "
                "(no user id, no text, or a removal placeholder)",
                f"check that {opt('user_col')} and {opt('text_col')} are the right columns",
            )
        )
    total = float(tokens_per_user.sum()) if tokens_per_user.size else 0.0
    if total > 0 and tokens_per_user.size > 1:
        share = float(tokens_per_user.max()) / total
        if share > MAX_USER_TOKEN_SHARE:
            warns.append(
                SanityWarning(
                    "user_heavy",
                    f"one user holds {100 * share:.0f}% of all tokens (more than {100 * MAX_USER_TOKEN_SHARE:.0f}%)",
                    f"check {opt('user_col')}: a category (a label, a company) or a stand-in such as 'deleted' "
                    "or 'unknown' groups many writers into one user; the release protects each value as one "
                    "person",
                )
            )
    return warns


# ---- user pattern ---------------------------------------------------------------------------


def check_user_pattern(pattern: str) -> str:
    """A regular expression with at least one group; the first group is the user."""
    try:
        groups = re.compile(pattern).groups
    except re.error as e:
        raise ParameterError(f"{opt('user_pattern')} {pattern!r} is not a valid regular expression ({e})") from None
    if groups < 1:
        raise ParameterError(
            f"{opt('user_pattern')} {pattern!r} has no group; put the part that names the user in "
            "parentheses, e.g. '^([^/]+)/' for the folder before the first '/'"
        )
    try:
        pc.replace_substring_regex(pa.array([""]), pattern=_wrapped(pattern), replacement=r"\1")
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        raise ParameterError(
            f"{opt('user_pattern')} {pattern!r} cannot be used ({first_line(e, 120)}); "
            "use plain groups, classes and repetitions (no look-around or back-references)"
        ) from None
    return pattern


def _wrapped(pattern: str) -> str:
    return f"(?s)^.*?(?:{pattern}).*$"


def apply_user_pattern(users, pattern: str) -> tuple[pa.Array, int]:
    """The first group of ``pattern`` in each user cell; null where it does not match. Also how many did not."""
    users = _as_strings(users)
    matched = pc.fill_null(pc.match_substring_regex(users, pattern), False)
    extracted = pc.replace_substring_regex(users, pattern=_wrapped(pattern), replacement=r"\1")
    out = pc.if_else(matched, extracted, pa.scalar(None, users.type))
    return out, int(len(users) - pc.sum(matched).as_py() if len(users) else 0)
