"""The Corpus page's look at a file before loading it (``dpsu_core.corpus.preview``): reading every column of
the whole file with the loader's Arrow readers and computing each column's facts, as a share of the load of the
same file, side by side in one run; and a second column choice on the file already read.

Run ``python -m benchmarks.run preview``. The files are synthetic airline-tweet CSVs shaped like the public
Twitter US Airline Sentiment file (tweet id, sentiment, airline, user name, retweets, text, date; 7,701 users per
14,640 rows), at 14,640 rows (about 3 MB) and ten times that.
"""

from __future__ import annotations

import csv
import io
import statistics
import time

from dpsu_core.corpus import LoadOptions, load_corpus
from dpsu_core.corpus.load import read_upload
from dpsu_core.corpus.preview import preview, survey

WORDS = (
    "flight delayed again gate crew seat bag lost refund customer service hours waiting plane late cancelled "
    "thanks great trip home weather airport change fee ticket booking help please phone hold"
).split()
AIRLINES = ("United", "US Airways", "American", "Southwest", "Delta", "Virgin America")
REPEATS = 5


def airline_csv(rows: int) -> bytes:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["tweet_id", "airline_sentiment", "airline", "name", "retweet_count", "text", "tweet_created"])
    for i in range(rows):
        text = " ".join(WORDS[(i * 7 + k * 13) % len(WORDS)] for k in range(18))
        w.writerow(
            [
                10**17 + i,
                ("negative", "neutral", "positive")[i % 3],
                AIRLINES[i % 6],
                f"user{(i * 7919) % (rows * 7701 // 14640)}",
                i % 5,
                f"@{AIRLINES[i % 6]} {text} #{i % 300}",
                f"2015-02-{10 + i % 14} 11:35:52 -0800",
            ]
        )
    return buf.getvalue().encode()


def _median(f, n: int = REPEATS) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def run() -> dict:
    out: dict = {"repeats": REPEATS, "files": {}}
    for rows in (14_640, 146_400):
        raw = read_upload(airline_csv(rows), "Tweets.csv")
        sv = survey(raw)
        t_preview = _median(lambda raw=raw: preview(survey(raw), user_col="name", text_col="text"))
        t_choice = _median(lambda sv=sv: preview(sv, user_col="airline", text_col="text"))
        t_load = _median(lambda raw=raw: load_corpus(raw, LoadOptions(user_col="name", text_col="text")), 3)
        out["files"][f"{rows}_rows"] = {
            "mb": round(len(raw.data) / 1e6, 1),
            "rows_covered": sv.sheet.table.num_rows,
            "whole_file": sv.sheet.complete,
            "distinct_users": next(f.distinct for f in sv.facts if f.name == "name"),
            "preview_over_load": round(t_preview / t_load, 3),
            "another_choice_over_preview": round(t_choice / t_preview, 3),
        }
    return out
