"""The ledger store on both backends (SQLite file, PostgreSQL database): corpora, caps, charges, refusals, kept
releases and the hash chain's audit export."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace

import pytest

from dpsu_core.accounting import BudgetRefused, compact, open_store
from dpsu_core.accounting.ledger import LedgerEntry, total
from dpsu_core.errors import InputError, ParameterError
from dpsu_core.mechanisms.registry import get_mechanism


def entry(mechanism: str = "policy-gaussian", epsilon: float = 3.0, delta: float = 1e-6, **kw) -> LedgerEntry:
    cal = get_mechanism(mechanism, epsilon=epsilon, delta=delta, **kw).calibrate()
    return LedgerEntry.from_calibration(cal, corpus_id=None, source="test")


def test_a_charge_past_the_cap_is_refused_with_what_remains(location):
    with open_store(location) as s:
        s.register_corpus("tickets", 3.5, 1e-5, by="custodian")
        first = s.charge("tickets", [entry()], actor="ana", tool="cli", job={"m": "policy-gaussian"})
        assert first.total.epsilon == pytest.approx(3.0) and first.remaining_epsilon == pytest.approx(0.5)
        with pytest.raises(BudgetRefused) as info:
            s.charge("tickets", [entry()], actor="ana", tool="app", job={})
        msg = str(info.value)
        assert "\n" not in msg and msg.startswith("refused: this release would spend ε = 3")
        assert "corpus 'tickets' has ε = 0.5 of 3.5 left" in msg
        assert info.value.remaining_epsilon == pytest.approx(0.5)
        assert len(s.entries("tickets")) == 1  # nothing recorded but the refusal
        assert [r.actor for r in s.refusals("tickets")] == ["ana"]
        assert s.verify().ok


def test_the_stored_entries_total_as_the_ledger_does(location):
    made = [entry(), entry("count-laplace", 1.0, 1e-7), entry("weighted-gaussian", 0.5, 1e-7)]
    with open_store(location) as s:
        for e in made:
            s.charge("c", [e], actor="ana", tool="api", job={})
        back = s.entries("c")
        assert [(e.mechanism, e.epsilon, e.delta, e.zcdp, e.laplace) for e in back] == [
            (e.mechanism, e.epsilon, e.delta, e.zcdp, e.laplace) for e in made
        ]
        assert s.total("c") == total(made)


def test_a_corpus_nobody_registered_gets_the_default_cap_once(location):
    with open_store(location) as s:
        s.set_default_cap(4.0, 1e-5)
        a = s.charge("new", [entry(epsilon=1.0)], actor="ana", tool="cli", job={})
        b = s.charge("new", [entry(epsilon=1.0)], actor="ana", tool="cli", job={})
        assert a.new_corpus and not b.new_corpus
        assert a.sentence().startswith("corpus 'new' is new to the ledger: it gets the default cap; charged")
        assert "default cap" not in b.sentence() and f"{b.total.epsilon:.4g} of 4 spent" in b.sentence()
        assert 0 < b.remaining_epsilon == 4.0 - b.total.epsilon < 4.0 - 1.0
        assert (s.corpus("new").epsilon_cap, s.corpus("new").delta_cap) == (4.0, 1e-5)


def test_an_analysts_own_cap_binds_their_spends_only(location):
    with open_store(location) as s:
        s.register_corpus("c", 10, 1e-5, by="custodian")
        s.set_analyst_cap("c", "ana", 2.0, 1e-5)
        s.charge("c", [entry(epsilon=1.9)], actor="ana", tool="cli", job={})
        with pytest.raises(BudgetRefused, match="'ana''s own cap on corpus 'c'"):
            s.charge("c", [entry(epsilon=1.9)], actor="ana", tool="cli", job={})
        s.charge("c", [entry(epsilon=1.9)], actor="ben", tool="cli", job={})
        by = s.spent_by_actor("c")
        assert set(by) == {"ana", "ben"} and by["ana"].releases == 1


def test_set_cap_is_chained_and_takes_effect(location):
    with open_store(location) as s:
        s.register_corpus("c", 1.0, 1e-5, by="custodian")
        with pytest.raises(BudgetRefused):
            s.charge("c", [entry(epsilon=3.0)], actor="ana", tool="cli", job={})
        s.set_cap("c", 5.0, 1e-5, by="custodian")
        s.charge("c", [entry(epsilon=3.0)], actor="ana", tool="cli", job={})
        kinds = [r["kind"] for r in s.chain_rows()]
        assert kinds == ["register", "cap", "spend"]
        assert s.verify().ok


def test_kept_releases_come_back_by_id_and_by_request(location):
    with open_store(location) as s:
        ch = s.charge("c", [entry()], actor="ana", tool="app", job={}, request_key="req-1")
        kept = s.keep_release(ch.charge_id, items=["a", "b c"], counts=[3.5, 1.0], calibration={"s": 1.5}, report="# r")
        assert s.release(kept.id) == kept and s.find_release("c", "req-1") == kept
        assert kept.items == ("a", "b c") and kept.counts == (3.5, 1.0) and kept.calibration == {"s": 1.5}
        assert s.find_release("c", "req-2") is None and s.releases("c") == [kept]
        with pytest.raises(ParameterError, match="no charge"):
            s.keep_release("nope", items=[], counts=None, calibration={}, report="")


def test_a_kept_releases_csv_comes_back_byte_for_byte(location):
    """The CSV a release wrote is kept as bytes in its own table: by id, by request and in the corpus's list."""
    data = b'"item","n","count","std"\r\n"caf\xc3\xa9",1,3.0,1.5\n"\'=sum",1,2.0,1.5\n\x00'
    with open_store(location) as s:
        ch = s.charge("c", [entry()], actor="ana", tool="cli", job={}, request_key="r")
        kept = s.keep_release(ch.charge_id, items=["café", "=sum"], counts=[3.0, 2.0], calibration={"s": 1.5},
                              report="{}", outputs={"csv": data})  # fmt: skip
        assert kept.outputs == {"csv": data} and kept.calibration == {"s": 1.5}
        plain = s.keep_release(s.charge("c", [entry()], actor="ana", tool="cli", job={}).charge_id, items=["a"],
                               counts=None, calibration={}, report="")  # fmt: skip
    with open_store(location) as s:  # read back by another connection
        assert s.release(kept.id).outputs == {"csv": data} and s.find_release("c", "r") == kept
        assert [k.outputs for k in s.releases("c")] == [{"csv": data}, {}] and s.release(plain.id) == plain


def test_a_kept_release_holds_only_published_outputs(location):
    with open_store(location) as s:
        ch = s.charge("c", [entry()], actor="ana", tool="cli", job={})
        keep = dict(items=["a"], counts=[1.0], calibration={}, report="")
        with pytest.raises(ParameterError, match="only its published outputs .*'true_counts'"):
            s.keep_release(ch.charge_id, **keep, outputs={"true_counts": b"a,7\n"})
        with pytest.raises(ParameterError, match="must be bytes"):
            s.keep_release(ch.charge_id, **keep, outputs={"csv": "item\na\n"})
        assert s.releases("c") == []  # nothing half-kept


def test_export_carries_the_hash_chain(location):
    with open_store(location) as s:
        s.charge("c", [entry()], actor="ana", tool="cli", job={"x": 1})
        s.charge("c", [entry(epsilon=1.0)], actor="ana", tool="cli", job={"x": 2})
        rows = list(csv.DictReader(io.StringIO(s.export("csv"))))
        doc = json.loads(s.export("json"))
    assert [r["prev_hash"] for r in rows[1:]] == [r["hash"] for r in rows[:-1]]
    assert [e["hash"] for e in doc["entries"]] == [r["hash"] for r in rows]
    assert doc["corpora"][0]["name"] == "c"


def test_the_store_key_is_32_random_bytes_kept_across_opens(location):
    with open_store(location) as s:
        key = s.secret()
    with open_store(location) as s:
        assert s.secret() == key and len(key) == 32


def test_bad_input_is_one_clear_line(location, tmp_path):
    with open_store(location) as s:
        for call in (
            lambda: s.register_corpus("", 1, 1e-6, by="x"),
            lambda: s.register_corpus("c", -1, 1e-6, by="x"),
            lambda: s.charge("c", [], actor="a", tool="cli", job={}),
            lambda: s.charge("c", [entry()], actor="a", tool="browser", job={}),
            lambda: s.charge("c", [entry()], actor="a", tool="cli", job={"x": object()}),
            lambda: s.corpus("missing"),
        ):
            with pytest.raises(ParameterError) as info:
                call()
            assert "\n" not in str(info.value)
        s.register_corpus("c", 1, 1e-6, by="x")
        with pytest.raises(ParameterError, match="already registered"):
            s.register_corpus("c", 1, 1e-6, by="x")
    with pytest.raises(ParameterError, match="is a folder"):
        open_store(tmp_path)


def test_a_bad_location_is_one_clear_line(tmp_path):
    not_a_ledger = tmp_path / "notes.txt"
    not_a_ledger.write_text("these are notes, not a database\n" * 100, encoding="utf-8")
    with pytest.raises(InputError, match="is not a dpsu ledger"):
        open_store(not_a_ledger)
    with pytest.raises(
        InputError, match="cannot connect to the ledger postgresql://dpsu:\\*\\*\\*@127.0.0.1:1/x"
    ) as info:
        open_store("postgresql://dpsu:secret@127.0.0.1:1/x")
    assert "secret" not in str(info.value) and "\n" not in str(info.value)


def test_compact_merges_identical_configurations_exactly():
    mixed = [entry(), entry("count-laplace", 1.0, 1e-7), entry()] * 5
    merged = compact(mixed)
    assert sorted(e.releases for e in merged) == [5, 10]
    assert total(merged) == total(mixed)


def test_names_are_data_never_sql(location):
    hostile = "x'); DROP TABLE entries; --"
    with open_store(location) as s:
        s.register_corpus(hostile, 5, 1e-5, by="o'brien")
        s.charge(hostile, [entry(epsilon=1.0)], actor='a"b', tool="cli", job={"q": "'; DELETE FROM corpora"})
        assert [c.name for c in s.corpora()] == [hostile] and len(s.entries(hostile)) == 1
        assert s.verify().ok
        with pytest.raises(ParameterError, match="at most 200 characters"):
            s.register_corpus("n" * 201, 5, 1e-5, by="x")


def test_teaching_and_laplace_entries_round_trip(location):
    cal = get_mechanism("count-laplace", epsilon=1.0, delta=1e-7).calibrate()
    seeded = LedgerEntry.from_calibration(cal, corpus_id=None, source="test", releases=3, teaching=True)
    with open_store(location) as s:
        s.charge("c", [seeded], actor="a", tool="app", job={})
        (back,) = s.entries("c")
        assert (back.teaching, back.releases, back.laplace) == (True, 3, seeded.laplace)
        assert not s.total("c").guaranteed


def test_releases_left_is_the_largest_count_the_tight_total_admits(tmp_path):
    """``account.releases_left`` against a count made one release at a time with ``ledger.total``, on a corpus
    that holds a GW release and a Laplace count release already; and a cap so large that only the basic total is
    ever composed (one release of ε 1 a million times: the search's limit)."""
    from dpsu_core.accounting.account import named, releases_left
    from dpsu_core.job import ReleaseJob

    with open_store(str(tmp_path / "ledger.sqlite")) as store:
        store.register_corpus("small", 10.0, 1e-5, by="custodian")
        store.register_corpus("large", 1e6, 0.5, by="custodian")
        for name in ("small", "large"):
            store.charge(name, [entry("gw", 2.0, 1e-7), entry("count-laplace", 0.5, 1e-9)], actor="a", tool="api",
                         job={})  # fmt: skip
        job = ReleaseJob.build("policy-gaussian", 1.0, 1e-7)
        small = named(store, "small", by="a")
        spent, one = small.entries(), list(job.entries(corpus_id=small.corpus_id, source="test"))

        def within_cap(k: int) -> bool:  # the tight total of the ledger plus k releases of the job, by ledger.total
            t = total(spent + [replace(e, releases=e.releases * k) for e in one])
            return t.epsilon <= 10.0 and t.basic_delta <= 1e-5

        k = releases_left(small, job)
        assert k > 7  # more than basic composition's (10 - 2.5) / 1: the tight total admits them
        assert within_cap(k) and not within_cap(k + 1)
        assert releases_left(named(store, "large", by="a"), job) == 1_000_000
