"""The floor of a CSV-to-tokens pipeline: read the file with Arrow (multi-threaded), lower-case the text
column and split it on spaces, in one Python process. Nothing that turns a corpus file into a user x
word matrix can do less, so ``bench_floor`` quotes dpsu's end-to-end time as a multiple of this.

    python -m benchmarks.floor FILE.csv [TEXT_COLUMN]     # prints the number of pieces
"""

from __future__ import annotations

import sys

import pyarrow.compute as pc
import pyarrow.csv as pacsv


def floor(path: str, text_column: str = "text") -> int:
    table = pacsv.read_csv(path)  # Arrow's reader uses all cores
    pieces = pc.split_pattern(pc.utf8_lower(table.column(text_column)), " ")
    return len(pc.list_flatten(pieces))


if __name__ == "__main__":
    print(floor(*sys.argv[1:3]))
