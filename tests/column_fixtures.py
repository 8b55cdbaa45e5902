"""Small real-shaped corpus files for the column, header, cleaning and encoding checks (issue 10).

Each function returns the bytes of one file shaped like a public corpus that new users upload:
  index_first   customer-support tweets saved by pandas with its index: an unnamed first column, author_id later
  reviews       movie reviews: review, sentiment; no user column; HTML line breaks and entities
  tweets_latin1 Sentiment140 layout: no header row, six columns, Latin-1 bytes
  html_reviews  product reviews with a user column and heavy HTML
  emails        Enron layout: file (mailbox/folder/n.), message (a whole RFC 822 message with headers)
  emoji         tweets with emoji, variation selectors, zero-width joiners and other format characters
  one_bad_byte  a UTF-8 file with one row holding a single Latin-1 byte
  airline_tweets  airline tweets: 7,500 rows by 7,200 users (``name``), a category (``airline``, 6 values), a
                malformed row and a post longer than Python's csv accepts, both within the first 5,000 rows
  analyst_notes   analysts' notes: 9,989 rows by 2,000 analysts, a category with many values (``stock``, 37)
``FIXTURES`` maps a file name to its bytes; the tests hold what the CLI and the app must do with each.
"""

from __future__ import annotations

import csv
import io

WORDS = (
    "order",
    "account",
    "refund",
    "delivery",
    "phone",
    "battery",
    "update",
    "screen",
    "service",
    "network",
    "signal",
    "billing",
    "store",
    "support",
    "team",
    "today",
    "still",
    "waiting",
    "please",
    "help",
)


def _csv(header, rows) -> bytes:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    if header is not None:
        w.writerow(header)
    w.writerows(rows)
    return buf.getvalue().encode("utf-8")


def _sentence(i: int, n: int = 6) -> str:
    return " ".join(WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(n))


N_AUTHORS = 30


def index_first() -> bytes:
    """pandas' to_csv(index=True): the first header cell is empty; author_id repeats (two tweets per author)."""
    header = ["", "tweet_id", "author_id", "inbound", "created_at", "text", "response_tweet_id"]
    rows = []
    for i in range(2 * N_AUTHORS):
        a = i % N_AUTHORS
        author = f"{115712 + a * 17}" if a % 3 else f"support_{a}"
        rows.append(
            [i, 1000 + i, author, "True", f"Tue Oct 31 22:{10 + i % 50:02d}:00 +0000 2017", _sentence(i), 2000 + i]
        )
    return _csv(header, rows)


REVIEW_TEXTS = (
    "One of the best films I have seen.<br /><br />The acting is superb &amp; the story moves.",
    "A waste of time &mdash; the plot &quot;twist&quot; is obvious.<br />Avoid.",
    "<i>Brilliant</i> photography, weak script.<br /><br />Still worth a look.",
    "I laughed &amp; cried. The ending &#8220;works&#8221; better than expected.",
)


def reviews() -> bytes:
    rows = [[f"{REVIEW_TEXTS[i % 4]} Review number {i}.", "positive" if i % 2 == 0 else "negative"] for i in range(48)]
    return _csv(["review", "sentiment"], rows)


def tweets_latin1() -> bytes:
    lines = []
    for i in range(40):
        user = f"user_{i % 12:02d}"
        text = f"@friend caf\u00e9 na\u00efve {_sentence(i, 4)} \u00e0 bient\u00f4t"
        lines.append(
            f'"{0 if i % 2 else 4}","{1467810369 + i}","Mon Apr 06 22:{19 + i % 40}:45 PDT 2009","NO_QUERY","{user}","{text}"'
        )
    return ("\n".join(lines) + "\n").encode("latin-1")


def html_reviews() -> bytes:
    rows = []
    for i in range(40):
        body = (
            f"<p>Great <b>{WORDS[i % 20]}</b>!</p><br/>Five stars &amp; more &lt;3 "
            f'<a href="http://shop.example/x{i}">link</a>&nbsp;{_sentence(i, 3)}'
        )
        rows.append([f"cust{i % 16:03d}", body])
    return _csv(["user_id", "review"], rows)


EMAIL_TEMPLATE = (
    "Message-ID: <{n}.JavaMail.evans@thyme>\n"
    "Date: Mon, 14 May 2001 16:39:00 -0700 (PDT)\n"
    "From: {box}@enron.com\n"
    "To: tim.belden@enron.com\n"
    "Subject: forecast {n}\n"
    "Mime-Version: 1.0\n"
    "Content-Type: text/plain; charset=us-ascii\n"
    "Content-Transfer-Encoding: 7bit\n"
    "X-From: Phillip K Allen\n"
    "X-Folder: \\Phillip_Allen_Jan2002_1\\Allen, Phillip K.\\'Sent Mail\n"
    "\n"
    "Here is our {word} forecast for the {word2} desk.\n"
)
MAILBOXES = (
    "allen-p",
    "arnold-j",
    "bass-e",
    "beck-s",
    "dasovich-j",
    "kaminski-v",
    "lay-k",
    "skilling-j",
    "farmer-d",
    "germany-c",
    "jones-t",
    "kean-s",
)


def emails() -> bytes:
    rows = []
    for n in range(48):
        box = MAILBOXES[n % len(MAILBOXES)]
        msg = EMAIL_TEMPLATE.format(n=n, box=box, word=WORDS[n % 20], word2=WORDS[(n * 3) % 20])
        rows.append([f"{box}/_sent_mail/{n}.", msg])
    return _csv(["file", "message"], rows)


EMOJI_TEXTS = (
    "love it \u2764\ufe0f so much",  # heart + variation selector 16
    "thumbs\u200d up \U0001f44d\U0001f3fd ok",  # zero width joiner inside a word, skin tone
    "family \U0001f468\u200d\U0001f469\u200d\U0001f467 day",  # ZWJ sequence
    "co\u00adoperate with\u200bin spa\u2060ce",  # soft hyphen, zero width space, word joiner (Cf) in words
    "right\u200f to left \u2066mark\u2069 test",  # RLM and isolates (Cf)
    "text\ufe0e style \u263a\ufe0f smile",  # variation selector 15 after a letter, VS16 after a symbol
)


def emoji() -> bytes:
    rows = [[f"fan{i % 14:02d}", f"{EMOJI_TEXTS[i % len(EMOJI_TEXTS)]} {_sentence(i, 2)}"] for i in range(42)]
    return _csv(["username", "tweet"], rows)


def one_bad_byte() -> bytes:
    good = []
    for i in range(40):
        good.append(f"writer{i % 15},na\u00efve caf\u00e9 \u65e5\u672c\u8a9e {_sentence(i, 3)}")
    lines = [b"author,text"] + [g.encode("utf-8") for g in good]
    lines.insert(8, "writer3,r\u00e9sum\u00e9 sent".encode("latin-1"))  # one row with Latin-1 bytes
    return b"\n".join(lines) + b"\n"


AIRLINE_ROWS = 7500  # well-formed data rows, plus one long post
AIRLINE_USERS = 7200
AIRLINES = ("United", "US Airways", "American", "Southwest", "Delta", "Virgin America")


def airline_tweets() -> bytes:
    """``tweet_id,airline,name,text``: row i by ``user{i % 7200}``; after row 100 a row with six fields (not four:
    skipped as malformed), after row 200 a post of 200,000 characters by ``longwinded``; 7,501 rows are read."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["tweet_id", "airline", "name", "text"])
    for i in range(AIRLINE_ROWS):
        w.writerow([str(10**12 + i), AIRLINES[i % 6], f"user{i % AIRLINE_USERS}", f"@{AIRLINES[i % 6]} {_sentence(i)}"])
        if i == 100:
            buf.write("1,United,extra,fields,here,too\n")
        if i == 200:
            w.writerow([str(9 * 10**12), "Delta", "longwinded", "word " * 40_000])
    return buf.getvalue().encode("utf-8")


ANALYST_ROWS = 9989
ANALYST_STOCKS = 37
ANALYST_TOP_ROWS = 1700  # the most covered stock's rows: 17% of them
ANALYSTS = 2000


def analyst_notes() -> bytes:
    """``date,stock,analyst,text``: analysts' notes on 37 stocks (a category: about 270 rows each, the first
    stock on 17% of the rows), by 2,000 analysts (the people: about 5 rows each)."""
    rows = []
    for i in range(ANALYST_ROWS):
        stock = 0 if i < ANALYST_TOP_ROWS else 1 + i % (ANALYST_STOCKS - 1)
        rows.append(
            [f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}", f"TICK{stock}", f"analyst{i * 7919 % ANALYSTS}", _sentence(i)]
        )
    return _csv(["date", "stock", "analyst", "text"], rows)


FIXTURES = {
    "index_first.csv": index_first,
    "reviews.csv": reviews,
    "tweets_latin1.csv": tweets_latin1,
    "html_reviews.csv": html_reviews,
    "emails.csv": emails,
    "emoji.csv": emoji,
    "one_bad_byte.csv": one_bad_byte,
}
