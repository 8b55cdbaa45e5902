"""The ledger's and the corpora's commands: ``dpsu ledger show|export|verify|export-release`` and ``dpsu corpus
list|register|set-budget``. Each takes ``--ledger PATH_OR_URL`` (else ``$DPSU_LEDGER``, else the per-user default
file). ``dpsu_core.interfaces.cli`` adds them with ``add_commands`` and runs them with ``run``; bad input raises the usual
typed errors (one line, exit 2), and ``ledger verify`` exits 1 when a chain is broken, naming the row.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ParameterError
from ..params import OPTIONS
from .backend import is_url
from .identity import local_actor

if TYPE_CHECKING:
    from .store import LedgerStore

COMMANDS = {
    "ledger": "the privacy ledger every tool charges: show, export, verify, export-release (costs nothing)",
    "corpus": "the corpora the ledger knows and their caps: list, register, set-budget",
}
EXIT_BROKEN_CHAIN = 1


def add_commands(parsers: dict[str, argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """The ``ledger`` and ``corpus`` commands' actions and flags, on their (already made) parsers; returns
    ``corpus register``'s parser (the command line adds the reading flags the file is read with)."""
    ledger = parsers["ledger"].add_subparsers(dest="action", required=True, parser_class=type(parsers["ledger"]))
    show = _action(ledger, "show", "each corpus's cap, spend, what is left, entries and kept releases")
    show.add_argument("--corpus", default=None, metavar="NAME", help="this corpus only")
    show.add_argument("--json", action="store_true", help="print JSON")
    export = _action(ledger, "export", "every entry with its hash chain, for an audit or a backup")
    export.add_argument("--format", default="json", choices=["csv", "json"])
    export.add_argument("-o", "--output", default=None, metavar="FILE", help="write here (default: stdout)")
    _action(ledger, "verify", "check every corpus's hash chain: exit 0 intact, 1 with the first bad row named")
    again = _action(ledger, "export-release", "write a kept release's items (and report) again, at no cost")
    again.add_argument("id", type=int, help="the kept release's number (see 'dpsu ledger show')")
    again.add_argument("-o", "--output", required=True, metavar="FILE", help="the items CSV to write")
    again.add_argument("--report", default=None, metavar="FILE", help="also write the release's report here")

    corpus = parsers["corpus"].add_subparsers(dest="action", required=True, parser_class=type(parsers["corpus"]))
    _action(corpus, "list", "every corpus with its cap, spend and what is left")
    register = _action(corpus, "register", "register a corpus file ahead of its first use, with its cap")
    register.add_argument("input", metavar="FILE", help="the corpus file (read to recognise it later, never kept)")
    budget = _action(corpus, "set-budget", "change a corpus's cap (recorded in its hash chain)")
    budget.add_argument("name", metavar="NAME")
    for p in (register, budget):
        if p is register:
            p.add_argument("--name", required=True, help="the corpus's name in the ledger")
        for spec in (OPTIONS["cap_epsilon"], OPTIONS["cap_delta"]):  # --epsilon, --delta
            p.add_argument(spec.cli, type=float, required=True, help=f"{spec.help} ({spec.range_text()})")
    return register


def _action(sub: Any, name: str, text: str) -> argparse.ArgumentParser:
    p = sub.add_parser(name, help=text, description=text)
    p.add_argument(
        "--ledger",
        default=None,
        metavar="PATH_OR_URL",
        help="the ledger: a SQLite file or a postgresql:// URL (default: $DPSU_LEDGER, else the per-user data file)",
    )
    return p


def run(args: argparse.Namespace) -> int:
    """Run ``dpsu ledger ...`` or ``dpsu corpus ...``; the exit status."""
    from .store import open_store

    action = _ACTIONS[(args.command, args.action)]
    with open_store(args.ledger) as store:
        return action(store, args)


# --------------------------------------------------------------------------- ledger
def _show(store: LedgerStore, args: argparse.Namespace) -> int:
    corpora = [store.corpus(args.corpus)] if args.corpus is not None else store.corpora()
    views = [_corpus_view(store, c.name) for c in corpora]
    if args.json:
        print(json.dumps({"ledger": store.location, "corpora": views}, indent=1, ensure_ascii=False))
        return 0
    print(f"ledger: {store.location}")
    if not views:
        print("no corpus has been charged or registered yet")
    for v in views:
        print(_corpus_line(v))
        for e in v["entries"]:
            print(
                f"  {e['time_utc']}  {e['actor']} ({e['tool']})  {e['label']}  ×{e['releases']}  "
                f"ε = {e['epsilon']:g}, δ = {e['delta']:.2g}"
            )
        for r in v["releases"]:
            print(
                f"  kept release {r['id']}: {r['items']} items, {r['created_utc']} (dpsu ledger export-release {r['id']})"
            )
        if v["refusals"]:
            print(f"  {v['refusals']} refused spend{'s' if v['refusals'] != 1 else ''}")
    return 0


def _corpus_view(store: LedgerStore, name: str) -> dict[str, Any]:
    """One corpus's public account: cap, total, what is left, its spends, kept releases and refusals."""
    from .ledger import ledger_summary

    c = store.corpus(name)
    spent = store.total(c.id)
    eps = spent.epsilon if spent.releases else 0.0
    return {
        "name": c.name,
        "epsilon_cap": c.epsilon_cap,
        "delta_cap": c.delta_cap,
        "spent": ledger_summary(spent),
        "remaining_epsilon": max(0.0, c.epsilon_cap - eps),
        "remaining_delta": max(0.0, c.delta_cap - spent.basic_delta),
        "entries": [
            {
                k: r[k]
                for k in ("seq", "time_utc", "actor", "tool", "mechanism", "label", "epsilon", "delta", "releases")
            }
            | {"teaching": bool(r["teaching"])}
            for r in store.chain_rows()
            if r["corpus"] == c.name and r["kind"] == "spend"
        ],
        "releases": [
            {"id": r.id, "charge_id": r.charge_id, "items": len(r.items), "created_utc": r.created_utc}
            for r in store.releases(c.id)
        ],
        "refusals": len(store.refusals(c.id)),
    }


def _corpus_line(v: dict[str, Any]) -> str:
    from .store import shown_down

    s = v["spent"]
    spent = "nothing spent" if not s["releases"] else f"spent ε = {s['epsilon'] or s['basic_epsilon']:.4g}"
    return (
        f"corpus {v['name']!r}: cap ε = {v['epsilon_cap']:g}, δ = {v['delta_cap']:.2g}; {spent} in "
        f"{s['releases']} release{'s' if s['releases'] != 1 else ''}; ε = {shown_down(v['remaining_epsilon'])} left"
    )


def _export(store: LedgerStore, args: argparse.Namespace) -> int:
    text = store.export(args.format)
    if args.output is None:
        sys.stdout.write(text)
        return 0
    _write(store, [("-o", args.output, text.encode("utf-8"))])
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


def _verify(store: LedgerStore, args: argparse.Namespace) -> int:
    v = store.verify()
    if v.ok:
        n = len(store.corpora())
        print(f"ok: {v.checked} entries of {n} corp{'us' if n == 1 else 'ora'}, every hash chain intact")
        return 0
    print(f"dpsu: ledger verify: {v.problem}", file=sys.stderr)
    return EXIT_BROKEN_CHAIN


def _export_release(store: LedgerStore, args: argparse.Namespace) -> int:
    from .store import items_csv

    kept = store.release(args.id)
    files = [("-o", args.output, items_csv(kept))]
    if args.report is not None:
        files.append(("--report", args.report, kept.report.encode("utf-8")))
    _write(store, files)
    print(f"wrote kept release {kept.id} ({len(kept.items)} items): nothing spent", file=sys.stderr)
    return 0


def _write(store: LedgerStore, files: list[tuple[str, str, bytes]]) -> None:
    """Write the files whole and together, never over the ledger's own file."""
    from ..outputs.writer import check_output_paths, write_together

    ledger = None if is_url(store.location) else store.location
    check_output_paths({label: path for label, path, _ in files}, {"the ledger": ledger})
    write_together(files)


# --------------------------------------------------------------------------- corpora
def _list(store: LedgerStore, args: argparse.Namespace) -> int:
    corpora = store.corpora()
    if not corpora:
        print(f"no corpus in the ledger {store.location} yet (default cap ε = {store.default_cap()[0]:g})")
    for c in corpora:
        print(_corpus_line(_corpus_view(store, c.name)))
    return 0


def _register(store: LedgerStore, args: argparse.Namespace) -> int:
    fingerprint, users = corpus_identity(Path(args.input), store.secret(), args.load_options)
    c = store.register_corpus(
        args.name, args.epsilon, args.delta, fingerprint=fingerprint, users_hash=users, by=local_actor()
    )
    print(f"registered corpus {c.name!r}: cap ε = {c.epsilon_cap:g}, δ = {c.delta_cap:.2g}")
    return 0


def corpus_identity(path: Path, secret: bytes, options: Any = None) -> tuple[bytes, str]:
    """How the store will recognise the corpus in ``path``: (its fingerprint (``fingerprint``: each user's tokens as
    the release reads them, keyed with the store's ``secret``), the salted hash of its user-id set ("" when each row
    is its own user)), the file read as ``options`` say (the reading flags of ``dpsu release``)."""
    from ..corpus import LoadOptions, load_corpus
    from ..corpus.fingerprint import fingerprint, salted_users_hash

    if not secret:
        raise ParameterError("the ledger has no key; open it with this dpsu to create one")
    corpus = load_corpus(str(path), options or LoadOptions())
    return fingerprint(corpus, secret).to_bytes(), salted_users_hash(corpus.users_digest, secret)


def _set_budget(store: LedgerStore, args: argparse.Namespace) -> int:
    c = store.set_cap(args.name, args.epsilon, args.delta, by=local_actor())
    print(f"corpus {c.name!r}: cap ε = {c.epsilon_cap:g}, δ = {c.delta_cap:.2g}")
    return 0


_ACTIONS: dict[tuple[str, str], Callable[[LedgerStore, argparse.Namespace], int]] = {
    ("ledger", "show"): _show,
    ("ledger", "export"): _export,
    ("ledger", "verify"): _verify,
    ("ledger", "export-release"): _export_release,
    ("corpus", "list"): _list,
    ("corpus", "register"): _register,
    ("corpus", "set-budget"): _set_budget,
}
