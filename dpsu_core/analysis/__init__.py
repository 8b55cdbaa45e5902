"""Reading releases: metrics, comparisons, neighbouring corpora, the utility preview, threshold tables, counts advice, charts."""
