"""End-to-end: the real app in a real browser (Debian chromium driven by Playwright).

One session uploads a CSV of a few hundred users, runs Policy Gaussian, visits every page and
downloads the exports; another feeds the Corpus page hostile uploads. Along the way: no traceback
ever shows, user text (file names, tokens) is displayed literally and never becomes HTML, and the
exports hold only the private output (no canary, no user id, formula cells neutralised).
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

from pages._format import mechanism_labels
from tests.column_fixtures import index_first
from tests.e2e.conftest import MENU_LINK
from tests.e2e.corpus_files import (
    CANARY,
    COMMON,
    FORMULA_TOKENS,
    N_USERS,
    USER_PREFIX,
    binary_bytes,
    good_csv,
    one_column_csv,
)

pytestmark = pytest.mark.e2e
expect = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed").expect

RUN_TIMEOUT_MS = 120_000
EPSILON = 4.0
DELTA = 1e-6
MAX_N = 2
# File names a user controls; they must show up as text, never as HTML or Markdown.
GOOD_NAME = "forum_**bold**_<b>x<b>.csv"
BINARY_NAME = "<img src=x onerror=alert(1)>**bold**.csv"
FORMULA_START = ("=", "+", "-", "@")


# ---- helpers ---------------------------------------------------------------------------------
#: (rendered lines, text lines) of a code block: the distinct tops of its characters' boxes, and its lines
RENDERED_LINES = """(el) => {
    const code = el.querySelector('code') || el;
    const tops = new Set();
    const range = document.createRange();
    const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        for (let i = 0; i < n.data.length; i++) {
            if (/\\s/.test(n.data[i])) continue;
            range.setStart(n, i);
            range.setEnd(n, i + 1);
            const box = range.getClientRects()[0];
            if (box) tops.add(Math.round(box.top));
        }
    }
    const sorted = [...tops].sort((a, b) => a - b);  // boxes of one line may differ by a pixel or two
    const shown = sorted.filter((t, i) => i === 0 || t - sorted[i - 1] > 4).length;
    return [shown, code.textContent.trim().split('\\n').length];
}"""


def wait_idle(page) -> None:
    """Wait until the Streamlit script has stopped running (and the client is connected)."""
    app = page.locator('[data-testid="stApp"]')
    try:  # a rerun may take a moment to start after the action that triggers it
        page.locator('[data-testid="stApp"][data-test-script-state="running"]').wait_for(timeout=1500)
    except Exception:  # noqa: BLE001  (Playwright TimeoutError: the run was already over, or never started)
        pass
    page.locator(
        '[data-testid="stApp"][data-test-connection-state="CONNECTED"][data-test-script-state="notRunning"]'
    ).wait_for(timeout=RUN_TIMEOUT_MS)
    page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden", timeout=RUN_TIMEOUT_MS)
    assert app.count() == 1


def assert_no_traceback(page) -> None:
    n = page.locator('[data-testid="stException"]').count()
    assert n == 0, f"{n} exception box(es) (traceback) on the page: " + " | ".join(
        page.locator('[data-testid="stException"]').all_inner_texts()
    )


def go(page, title: str, heading: str) -> None:
    """Switch page with the sidebar navigation (keeps the Streamlit session)."""
    page.locator(MENU_LINK, has_text=title).click()
    page.get_by_role("heading", name=heading).wait_for(timeout=RUN_TIMEOUT_MS)
    wait_idle(page)
    assert_no_traceback(page)


def shot(page, screenshots: Path, name: str) -> None:
    """Full-page screenshot. Streamlit scrolls inside its own container, not the window, so grow the
    viewport to the content's height first (else full_page only captures one screen)."""
    size = page.viewport_size
    height = page.evaluate("""() => Math.max(...['stMain', 'stMainBlockContainer', 'stSidebarContent']
        .map(id => document.querySelector(`[data-testid="${id}"]`)).filter(Boolean).map(el => el.scrollHeight))""")
    page.set_viewport_size({"width": size["width"], "height": min(max(size["height"], int(height) + 40), 12000)})
    try:
        page.wait_for_timeout(300)  # let charts re-lay out at the new size (screenshot only, nothing asserted)
        page.screenshot(path=str(screenshots / f"{name}.png"), full_page=True)
    finally:
        page.set_viewport_size(size)


def metric(page, label: str, where: str = "stMain") -> str:
    """The value of the first metric whose label contains ``label``, in the main area (or ``where="stSidebar"``)."""
    box = page.locator(f'[data-testid="{where}"] [data-testid="stMetric"]').filter(
        has=page.locator('[data-testid="stMetricLabel"]', has_text=label)
    )
    return box.first.locator('[data-testid="stMetricValue"]').inner_text().strip()


def expect_metric(page, label: str, value: str) -> None:
    """Wait until the first main-area metric whose label contains ``label`` reads ``value`` (a load's own run
    shows its message before the rerun that redraws the metrics above it)."""
    box = page.locator('[data-testid="stMain"] [data-testid="stMetric"]').filter(
        has=page.locator('[data-testid="stMetricLabel"]', has_text=label)
    )
    expect(box.first.locator('[data-testid="stMetricValue"]')).to_have_text(value, timeout=RUN_TIMEOUT_MS)


def as_int(text: str) -> int:
    return int(text.replace(",", ""))


def errors(page) -> list[str]:
    return page.locator('[data-testid="stAlertContentError"]').all_inner_texts()


def upload(page, name: str, data: bytes, mime: str = "text/csv") -> None:
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(
        {"name": name, "mimeType": mime, "buffer": data}
    )
    chip = page.locator('[data-testid="stFileChip"]').first  # single-file uploader: one chip, aria-label "name, size"
    expect(chip).to_have_attribute("aria-label", re.compile("^" + re.escape(name) + ", "), timeout=RUN_TIMEOUT_MS)
    wait_idle(page)


def selectbox_value(page, label: str) -> str:
    return page.get_by_role("combobox", name=label, exact=True).input_value()


def corpus_in_use(page) -> str:
    """The text under 'Corpus in use' on the Corpus page (an st.text element)."""
    return page.locator('[data-testid="stMain"] [data-testid="stText"]').first.inner_text().strip()


def sidebar_corpus(page) -> str:
    return page.locator('[data-testid="stSidebar"] [data-testid="stText"]').inner_text().strip()


def load_good_corpus(page) -> None:
    """Corpus page: upload the good CSV under a hostile-looking name, keep symbols, n-grams up to MAX_N."""
    page.get_by_text("Upload a file", exact=True).click()
    wait_idle(page)
    upload(page, GOOD_NAME, good_csv())
    assert errors(page) == []
    assert "author" in selectbox_value(page, "User id column")  # the guessed columns
    assert "body" in selectbox_value(page, "Text column")
    strip = page.locator(".st-key-pp_strip_symbols input")  # widget key pp_strip_symbols
    if strip.is_checked():
        page.locator(".st-key-pp_strip_symbols label").click()
    assert not strip.is_checked()
    html = page.locator(".st-key-pp_strip_html input")  # keep the <script> pieces: they are the hostile items
    if html.is_checked():
        page.locator(".st-key-pp_strip_html label").click()
    assert not html.is_checked()
    n_gram = page.locator(".st-key-corpus_max_n")
    for _ in range(MAX_N - 1):
        n_gram.locator('[data-testid="stNumberInputStepUp"]').click()
    assert n_gram.locator("input").input_value() == str(MAX_N)
    page.get_by_role("button", name="Load corpus").click()
    wait_idle(page)
    page.get_by_text("Corpus loaded.", exact=True).wait_for(timeout=RUN_TIMEOUT_MS)
    assert_no_traceback(page)
    assert errors(page) == []
    expect_metric(page, "Users", f"{N_USERS:,}")
    assert corpus_in_use(page) == GOOD_NAME


def load_upload(page, name: str, data: bytes) -> None:
    """Corpus page: upload ``data`` as ``name`` and load it with the guessed columns and default reading."""
    page.get_by_text("Upload a file", exact=True).click()
    wait_idle(page)
    upload(page, name, data)
    page.get_by_role("button", name="Load corpus").click()
    wait_idle(page)
    page.get_by_text("Corpus loaded.", exact=True).wait_for(timeout=RUN_TIMEOUT_MS)
    assert errors(page) == []


def run_release(page) -> None:
    """Release page: run the release with the page's choices and wait for the released set."""
    page.get_by_role("button", name="Run release").click()
    wait_idle(page)
    page.get_by_role("heading", name=re.compile(r"^Released set")).wait_for(timeout=RUN_TIMEOUT_MS)
    assert_no_traceback(page)
    assert errors(page) == []


def assert_no_html_injection(page, dialogs: list) -> None:
    """Hostile strings from files are text: no element made from them, no script run."""
    assert dialogs == [], f"a script ran in the page: {dialogs}"
    assert page.locator("script", has_text="alert(1)").count() == 0
    assert page.locator('img[src="x"]').count() == 0
    main_and_sidebar = '[data-testid="stMain"], [data-testid="stSidebar"]'
    for tag, text in (("strong", "bold"), ("b", "x"), ("em", "bold")):
        n = page.locator(main_and_sidebar).locator(tag).filter(has_text=re.compile(rf"^\s*{text}\s*$")).count()
        assert n == 0, f"a <{tag}>{text}</{tag}> element was made from user text"


def download(page, label: str) -> bytes:
    """Click a download button and read the file. The buttons use on_click="ignore": no rerun follows."""
    with page.expect_download(timeout=RUN_TIMEOUT_MS) as d:
        page.get_by_role("button", name=label).click()
    try:
        return Path(d.value.path()).read_bytes()
    finally:
        wait_idle(page)


def walk_keys(obj):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield str(k)
            yield from walk_keys(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from walk_keys(v)


def new_page(browser, app_url):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    page = ctx.new_page()
    page.set_default_timeout(30_000)
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(app_url)
    page.get_by_role("heading", name="1 · Corpus").wait_for(timeout=RUN_TIMEOUT_MS)
    wait_idle(page)
    assert_no_traceback(page)
    return ctx, page, dialogs


# ---- tests ---------------------------------------------------------------------------------
def test_upload_release_every_page_and_exports(browser, app_url, screenshots):
    ctx, page, dialogs = new_page(browser, app_url)
    try:
        _full_flow(page, dialogs, screenshots)
    finally:
        ctx.close()


def _full_flow(page, dialogs, screenshots):
    # 1 · Corpus: upload, columns, preprocessing, canary.
    load_good_corpus(page)  # ends right after "Load corpus": no other rerun since
    # The load reruns the script, so the sidebar (drawn before the page) already shows the new corpus.
    assert sidebar_corpus(page) == f"{GOOD_NAME}\n{N_USERS} users"  # literal, in the sidebar too
    canaries = page.locator(".st-key-canary_text textarea")
    assert canaries.input_value() == ""  # the demo's canaries do not carry over to an upload
    canaries.fill(CANARY)
    canaries.press("Control+Enter")
    wait_idle(page)
    assert canaries.input_value() == CANARY
    assert_no_html_injection(page, dialogs)
    shot(page, screenshots, "corpus")

    # The budget, in the sidebar.
    eps = page.locator(".st-key-epsilon input")
    eps.fill(str(EPSILON))
    eps.press("Enter")
    wait_idle(page)
    assert float(eps.input_value()) == EPSILON

    # 2 · Release: Policy Gaussian.
    go(page, "Release", "2 · Release")
    labels = mechanism_labels()
    want = labels["policy-gaussian"]
    if want not in selectbox_value(page, "Mechanism"):
        page.get_by_role("combobox", name="Mechanism", exact=True).click()
        page.get_by_role("option", name=want, exact=True).click()
        wait_idle(page)
    assert want in selectbox_value(page, "Mechanism")
    assert metric(page, "ε") == f"{EPSILON:g}"
    page.get_by_role("button", name="Run release").click()
    wait_idle(page)
    page.get_by_role("heading", name="Released set (private)").wait_for(timeout=RUN_TIMEOUT_MS)
    assert_no_traceback(page)
    assert errors(page) == []
    n_released = as_int(metric(page, "Items released"))
    assert n_released > 0
    assert metric(page, "Canaries released") == "0 of 1"
    search = page.locator(".st-key-item_search input")
    search.fill("script")
    search.press("Enter")
    wait_idle(page)
    shown = page.get_by_text(re.compile(r"items shown$")).inner_text()
    assert re.fullmatch(rf"\d+ of {n_released:,} items shown", shown.strip()), shown
    assert 1 <= as_int(shown.split(" of ")[0]) < n_released  # "< script", "script", "script >", ...
    search.fill("")
    search.press("Enter")
    wait_idle(page)
    assert_no_html_injection(page, dialogs)
    shot(page, screenshots, "release")

    # 3 · Thresholds (public: parameters only).
    go(page, "Thresholds", "3 · Thresholds")
    page.locator('[data-testid="stVegaLiteChart"]').nth(2).wait_for(timeout=RUN_TIMEOUT_MS)
    shot(page, screenshots, "thresholds")

    # 4 · Histogram fill (NOT private, and says so).
    go(page, "Histogram fill", "4 · Histogram fill")
    assert "NOT differentially private" in page.locator('[data-testid="stAlertContentWarning"]').first.inner_text()
    assert as_int(metric(page, "Items with weight > 0")) >= n_released
    page.locator('[data-testid="stVegaLiteChart"]').first.wait_for(timeout=RUN_TIMEOUT_MS)
    shot(page, screenshots, "histogram")

    # 5 · Coverage (NOT private, and says so).
    go(page, "Coverage", "5 · Coverage")
    assert "NOT differentially private" in page.locator('[data-testid="stAlertContentWarning"]').first.inner_text()
    assert as_int(metric(page, "Items released")) == n_released
    page.locator('[data-testid="stVegaLiteChart"]').first.wait_for(timeout=RUN_TIMEOUT_MS)
    shot(page, screenshots, "coverage")

    # 6 · Compare: one run per mechanism keeps it quick.
    go(page, "Compare", "6 · Compare")
    runs = page.locator(".st-key-cmp_runs input")
    runs.fill("1")
    runs.press("Enter")
    wait_idle(page)
    expect(page.get_by_text(re.compile(r"Compare: \d+ mechanisms × 1 run: \d+ releases on"))).to_be_visible()
    raise_budget = page.locator('[data-testid="stMain"] [class*="st-key-raise_budget_"] button')
    if raise_budget.count():  # past the session budget: blocked until a new budget covering it is confirmed
        raise_budget.click()
        wait_idle(page)
    page.get_by_role("button", name="Run comparison").click()
    # every mechanism once, each charged to the durable ledger in its own transaction: longer than one release
    page.get_by_role("heading", name=re.compile("Released items: mean")).wait_for(timeout=3 * RUN_TIMEOUT_MS)
    wait_idle(page)
    assert_no_traceback(page)
    assert errors(page) == []
    page.locator('[data-testid="stVegaLiteChart"]').first.wait_for(timeout=RUN_TIMEOUT_MS)
    shot(page, screenshots, "compare")

    # 7 · Export: download and read every file.
    go(page, "Export", "7 · Export")
    assert as_int(metric(page, "Items released")) == n_released
    files = {
        label: download(page, label)
        for label in (
            "Released items (CSV)",
            "Released items (JSON)",
            "Released items (TXT)",
            "Release report (JSON)",
            "Release report (Markdown)",
        )
    }
    # The command to redo the release: a line per flag, and no line wrapped by the browser (a wrap once cut
    # "--text-col" in two): as many rendered lines as text lines.
    block = page.locator('[data-testid="stCode"]', has_text="dpsu release").first
    shown, lines = block.evaluate(RENDERED_LINES)
    assert lines > 5 and shown == lines, f"{lines} lines of command rendered on {shown} lines"
    # The files are built once per release: a second download a second later is the same file (same date).
    page.wait_for_timeout(1100)
    assert download(page, "Release report (JSON)") == files["Release report (JSON)"]
    shot(page, screenshots, "export")
    assert_no_traceback(page)
    assert_no_html_injection(page, dialogs)
    _check_exports(files, n_released)


def _check_exports(files: dict[str, bytes], n_released: int) -> None:
    for label, body in files.items():
        text = body.decode("utf-8")
        assert CANARY not in text, f"{label} holds the canary"
        assert USER_PREFIX not in text, f"{label} holds a user id"

    # CSV: the released items, every cell safe for a spreadsheet.
    rows = list(csv.reader(io.StringIO(files["Released items (CSV)"].decode("utf-8"))))
    header, body = rows[0], rows[1:]
    assert header == ["item", "n"]  # Policy Gaussian has no noisy counts; never true counts or weights
    assert len(body) == n_released
    cells = [c for row in body for c in row]
    assert not [c for c in cells if c.startswith(FORMULA_START)], "formula cells were not neutralised"
    items = [row[0][1:] if row[0].startswith("'") and row[0][1:].startswith(FORMULA_START) else row[0] for row in body]
    neutralised = {row[0] for row in body if row[0].startswith("'")}
    # Every user writes = @ + -: with overwhelming probability they are released, and must come out neutralised.
    assert {"'" + t for t in FORMULA_TOKENS} <= neutralised, sorted(neutralised)
    assert set(COMMON) <= set(items)  # words a hundred users or more write
    assert all(1 <= int(row[1]) <= MAX_N and int(row[1]) == len(item.split()) for row, item in zip(body, items))

    # JSON holds the same items literally; TXT holds them neutralised exactly as the CSV's item column.
    js = json.loads(files["Released items (JSON)"])
    assert sorted(r["item"] for r in js["items"]) == sorted(items)
    assert sorted(files["Released items (TXT)"].decode("utf-8").splitlines()) == sorted(row[0] for row in body)

    # The report: what was run and its guarantee, nothing from the raw data.
    rep = json.loads(files["Release report (JSON)"])
    assert rep["mechanism"] == "policy-gaussian"
    assert rep["epsilon"] == pytest.approx(EPSILON)
    assert rep["delta"] == pytest.approx(DELTA)
    assert rep["released_total"] == n_released
    assert rep["teaching_mode"] is False
    assert f"({EPSILON:g}, {DELTA:.3g})-differentially private" in rep["guarantee"]
    for key in walk_keys(rep):
        assert not re.search(r"weight|true|user_count|diagnostic|raw", key, re.I), f"report key {key!r}"
    for word in ("=", "script", "bold", "privacy"):  # no released (or raw) item in the report
        assert word not in json.dumps(rep["released_per_length"]) and word not in json.dumps(rep["params"])
    md = files["Release report (Markdown)"].decode("utf-8")
    assert "policy-gaussian" in md
    assert re.search(rf"\|\s*epsilon\s*\|\s*{EPSILON:g}\s*\|", md)
    assert re.search(r"\|\s*delta\s*\|\s*1e-0?6\s*\|", md)
    assert f"Items released: {n_released}" in md
    assert not re.search(r"weights?\b|true count|user count", md, re.I)


def test_hostile_uploads_show_an_error_and_keep_the_corpus(browser, app_url, screenshots):
    ctx, page, dialogs = new_page(browser, app_url)
    try:
        load_good_corpus(page)

        # A binary file renamed .csv, whose name is HTML and Markdown.
        upload(page, BINARY_NAME, binary_bytes())
        # the chip shows before the upload's rerun may have started: wait for its error box itself
        expect(page.locator('[data-testid="stAlertContentError"]')).to_have_count(1, timeout=RUN_TIMEOUT_MS)
        wait_idle(page)
        assert_no_traceback(page)
        errs = errors(page)
        assert len(errs) == 1 and "cannot be read" in errs[0] and "binary" in errs[0], errs
        assert BINARY_NAME in errs[0]  # the name is shown literally
        assert_no_html_injection(page, dialogs)
        shot(page, screenshots, "upload_error")
        expect(page.get_by_role("button", name="Load corpus")).to_be_disabled()  # nothing readable to load
        assert corpus_in_use(page) == GOOD_NAME
        assert as_int(metric(page, "Users")) == N_USERS

        # A CSV without a user column: nothing is picked by position, the page asks and loads nothing.
        upload(page, "no_user_column.csv", one_column_csv())
        assert_no_traceback(page)
        assert errors(page) == []
        assert selectbox_value(page, "User id column") == ""
        assert "body" in selectbox_value(page, "Text column")
        ask = page.locator('[data-testid="stAlertContentInfo"]').filter(has_text="cannot tell which column")
        expect(ask).to_have_count(1)
        assert "'Each row is its own user'" in ask.inner_text()
        expect(page.get_by_role("button", name="Load corpus")).to_be_disabled()
        assert corpus_in_use(page) == GOOD_NAME
        assert as_int(metric(page, "Users")) == N_USERS
        assert sidebar_corpus(page) == f"{GOOD_NAME}\n{N_USERS} users"
        assert_no_html_injection(page, dialogs)
    finally:
        ctx.close()


def test_deep_link_on_a_fresh_server_shows_the_whole_app(browser, fresh_app_url, screenshots):
    """The first request of a new server is a deep link: the page must still come with app.py's frame
    (sidebar navigation with all eight pages and, in single-user mode, the custodian's; the budget) and work, not
    run on its own."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = ctx.new_page()
        page.set_default_timeout(30_000)
        page.goto(f"{fresh_app_url}/release")
        page.get_by_role("heading", name="2 · Release").wait_for(timeout=RUN_TIMEOUT_MS)
        wait_idle(page)
        assert_no_traceback(page)
        links = page.locator(MENU_LINK)
        assert links.count() == 9  # the eight pages and the custodian's (single-user mode: the local user is it)
        sidebar = page.locator('[data-testid="stSidebar"]')
        for heading in ("Next release", "Session budget", "Privacy spent"):  # the release's ε apart from the cap
            assert sidebar.get_by_role("heading", name=heading).count() == 1
        page.get_by_role("button", name="Run release").click()
        wait_idle(page)
        assert as_int(metric(page, "Items released")) > 0
        assert_no_traceback(page)
        shot(page, screenshots, "deep_link_release")
    finally:
        ctx.close()


def test_index_column_file_picks_author_id_and_warns_on_a_unique_column(browser, app_url, screenshots):
    """The customer-support layout (pandas' unnamed index column first, author_id later): the user column is
    the named one, and choosing a column with a different value on every row shows the warning."""
    ctx, page, dialogs = new_page(browser, app_url)
    try:
        page.get_by_text("Upload a file", exact=True).click()
        wait_idle(page)
        upload(page, "index_first.csv", index_first())
        assert_no_traceback(page)
        assert errors(page) == []
        assert selectbox_value(page, "User id column") == "author_id"
        assert selectbox_value(page, "Text column") == "text"
        warn = page.locator('[data-testid="stAlertContentWarning"]').filter(has_text="each row will be a user")
        expect(warn).to_have_count(0)
        page.get_by_role("combobox", name="User id column", exact=True).click()
        page.get_by_role("option", name="(unnamed column 0)", exact=True).click()
        wait_idle(page)
        expect(warn).to_have_count(1, timeout=RUN_TIMEOUT_MS)
        assert "is that the privacy unit you mean?" in warn.inner_text()
        expect(
            page.locator('[data-testid="stAlertContentWarning"]').filter(has_text="looks like a row index")
        ).to_have_count(1)
        shot(page, screenshots, "unique_user_column_warning")
        page.get_by_role("combobox", name="User id column", exact=True).click()
        page.get_by_role("option", name="author_id", exact=True).click()
        wait_idle(page)
        expect(warn).to_have_count(0, timeout=RUN_TIMEOUT_MS)
        # the uploaded, not yet loaded file survives a visit to another page
        go(page, "Release", "2 · Release")
        go(page, "Corpus", "1 · Corpus")
        page.get_by_text("File kept from before: index_first.csv", exact=False).wait_for(timeout=RUN_TIMEOUT_MS)
        assert selectbox_value(page, "User id column") == "author_id"
        page.get_by_role("button", name="Load corpus").click()
        wait_idle(page)
        page.get_by_text("Corpus loaded.", exact=True).wait_for(timeout=RUN_TIMEOUT_MS)
        expect_metric(page, "Users", "30")
        assert_no_html_injection(page, dialogs)
    finally:
        ctx.close()
