"""The Export page's downloads of a release, built once and kept in the session's typed caches
(``AppState.export_cache``, ``AppState.tokenizer_cache``): the report's date does not change between clicks."""

from __future__ import annotations

from dpsu_core.accounting.history import ReleaseRecord
from dpsu_core.outputs.export import ExportFile, export_files, report_markdown
from dpsu_core.outputs.tokenizer_export import TokenizerSpec, tokenizer_json
from pages._state import AppState, ExportCache, TokenizerCache, TokenizerFiles


def release_files(state: AppState, rec: ReleaseRecord) -> list[ExportFile]:
    """The release's downloads, built once per release and ledger state (``dpsu_core.outputs.export.export_files``):
    the report names the release and what the session had spent on its corpus at that release (``rec.spent``)."""
    n = len(state.ledger.entries)
    cache = state.export_cache
    if cache is None or (cache.number, cache.ledger_size) != (rec.number, n):
        cache = ExportCache(rec.number, n, export_files(rec.release, rec.spent, rec.title(), rec.number))
        state.export_cache = cache
    return cache.files


def tokenizer_files(state: AppState, rec: ReleaseRecord, spec: TokenizerSpec) -> TokenizerFiles:
    """(tokenizer.json, the Markdown report recording how it was built, the build record) of a release and a
    ``TokenizerSpec``, built once per release and spec (the report's account is the one at this release,
    ``rec.spent``)."""
    cache = state.tokenizer_cache
    if cache is None or (cache.number, cache.spec) != (rec.number, spec):
        body, built = tokenizer_json(rec.release, spec)
        report = report_markdown(rec.release, rec.spent, rec.title(), built).encode("utf-8")
        cache = TokenizerCache(rec.number, spec, TokenizerFiles(body, report, built))
        state.tokenizer_cache = cache
    return cache.files
