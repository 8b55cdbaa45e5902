"""A large CSV's quoting is scanned as two halves in two threads (issue 20); the result, or the error and its
line numbers, is always exactly that of the single pass, wherever the split falls (inside a quoted field too)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpsu_core.corpus import csvscan
from dpsu_core.corpus.csvscan import UnterminatedQuote, scan_csv

PIECES = ["a", "bc", ",", '"', '""', "\n", "\r\n", "\r", '"x\ny"', '"q""r"', ' "s" ', "δ", "\t"]


def _outcome(data: bytes, delimiter: str):
    try:
        return scan_csv(data, delimiter)
    except UnterminatedQuote as e:
        return ("error", e.line, e.closed_line, str(e))


def _both(monkeypatch, data: bytes, delimiter: str = ","):
    monkeypatch.setattr(csvscan, "PARALLEL_MIN_BYTES", 1 << 62)
    one = _outcome(data, delimiter)
    monkeypatch.setattr(csvscan, "PARALLEL_MIN_BYTES", 1)
    return one, _outcome(data, delimiter)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=60).map("".join))
def test_two_halves_give_the_single_pass_result(text):
    with pytest.MonkeyPatch.context() as mp:
        one, two = _both(mp, text.encode("utf-8"))
    assert one == two


@pytest.mark.parametrize(
    "data",
    [
        b'u,t\na,"one\ntwo"\nb,x\nc,y\nd,z\ne,w\n',  # the middle falls inside a quoted field: one thread again
        b'u,t\na,x\nb,y\nc,"ok"\nd,"say "hi" now"\ne,"z\n',  # an error in the second half: its line in the file
        b'u,t\na,"x\nb,y" and more\nc,z\nd,w\ne,v\nf,u\n',  # closed badly in the first half
        b'u,t\r\na,x\r\nb,"y\r\nz"\r\nc,w\r\nd,"s"t"\r\ne,v\r\n',
    ],
)
def test_known_splits(monkeypatch, data):
    one, two = _both(monkeypatch, data)
    assert one == two


def _windows_outcome(data: bytes, window: int, dropped: list[tuple[int, int]]):
    import mmap
    import tempfile

    from dpsu_core.corpus.csvscan import scan_csv_windows

    with tempfile.TemporaryFile() as fh:
        fh.write(data)
        fh.flush()
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as m:
            try:
                return scan_csv_windows(m, ",", window=window, done=lambda a, b: dropped.append((a, b)))
            except UnterminatedQuote as e:
                return ("error", e.line, e.closed_line, str(e))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=60).map("".join), st.integers(1, 40))
def test_windows_of_a_mapped_file_give_the_single_pass_result(text, window):
    """The Spark input check scans a mapped part window by window, dropping each once scanned (issue 28: a 2.3 GB
    part held whole in the driver's memory); wherever the windows fall, the result is the single pass's."""
    data = text.encode("utf-8")
    dropped: list[tuple[int, int]] = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(csvscan, "PARALLEL_MIN_BYTES", 1 << 62)
        one = _outcome(data, ",")
    assert _windows_outcome(data, window, dropped) == one
    assert dropped and dropped[0][0] == 0  # every window is handed back, in order, from the start
    assert all(b0 == a1 for (_, b0), (a1, _) in zip(dropped, dropped[1:]))
