"""Fixtures of the browser tests: the app as a real Streamlit server on loopback, and Debian's chromium."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
START_TIMEOUT_S = 60.0
#: how long a browser expectation waits (Playwright's default is 5 s: too short for a Streamlit rerun while the
#: other xdist worker runs Spark or a release on the same two cores)
EXPECT_TIMEOUT_MS = 30_000
#: a link of the app's menu (app.py draws it in the sidebar with st.page_link: Streamlit's automatic menu is off)
MENU_LINK = '.st-key-app_menu [data-testid="stPageLink-NavLink"]'
SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"


with contextlib.suppress(ImportError):  # playwright is a test dependency; without it the browser tests skip
    from playwright.sync_api import expect

    expect.set_options(timeout=EXPECT_TIMEOUT_MS)


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config, items):
    """The browser tests run one after another on one xdist worker (``--dist loadgroup``): twenty concurrent
    sessions beside another browser test on two cores made Streamlit reruns miss their timeouts."""
    for item in items:
        if "/tests/e2e/" in str(item.path):
            item.add_marker(pytest.mark.xdist_group("browser"))


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
            return r.status == 200 and r.read().decode().strip() == "ok"
    except (urllib.error.URLError, OSError):
        return False


def _server_env(log_dir: Path, env: dict[str, str] | None) -> dict[str, str]:
    """The server's environment: its own durable ledger beside its log (never the user's per-user store: a
    session-scoped server starts before any test's own settings), with the suite's large default cap, unless
    the caller's ``env`` names them."""
    out = dict(os.environ if env is None else env)
    out.setdefault("DPSU_LEDGER", str(log_dir / "ledger.sqlite"))
    out.setdefault("DPSU_DEFAULT_CAP", "1e6,0.5")
    if env is None:  # a test's own DPSU_LEDGER (from tests/conftest.py) may be gone when a shared server outlives it
        out["DPSU_LEDGER"] = str(log_dir / "ledger.sqlite")
    return out


@contextlib.contextmanager
def streamlit_server(log_dir: Path):
    """Start ``streamlit run app.py`` on a free loopback port; yield its URL; stop the whole process group."""
    with streamlit_server_process(log_dir) as (url, _proc):
        yield url


@contextlib.contextmanager
def streamlit_server_process(
    log_dir: Path, env: dict[str, str] | None = None, args: tuple[str, ...] = (), port: int | None = None
):
    """``streamlit_server`` yielding (URL, the server's Popen) (its pid gives the server's memory); ``args``: more
    options of ``streamlit run``; ``port``: one chosen by the caller (``free_port``), else a free one."""
    port = port or free_port()
    log = log_dir / "server.log"
    cmd = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        "app.py",
        "--server.headless",
        "true",
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
        *args,
    ]
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            cmd, cwd=REPO, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, env=_server_env(log_dir, env)
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _healthy(url):
            if proc.poll() is not None:
                pytest.fail(f"the Streamlit server exited with code {proc.returncode}:\n{log.read_text()[-3000:]}")
            if time.monotonic() > deadline:
                pytest.fail(
                    f"the Streamlit server did not answer /_stcore/health within {START_TIMEOUT_S:.0f} s:\n"
                    f"{log.read_text()[-3000:]}"
                )
            time.sleep(0.25)
        yield url, proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)


@pytest.fixture(scope="session")
def app_url(tmp_path_factory):
    """One server shared by the tests that do not care about its first request."""
    with streamlit_server(tmp_path_factory.mktemp("streamlit")) as url:
        yield url


@pytest.fixture
def fresh_app_url(tmp_path):
    """A server of its own, whose first request is the test's (deep links on a new server)."""
    with streamlit_server(tmp_path) as url:
        yield url


@pytest.fixture(scope="session")
def browser():
    if not CHROMIUM.exists():
        pytest.skip(
            f"{CHROMIUM} not found: install Debian's chromium package (apt-get install chromium) "
            "to run the browser tests"
        )
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(scope="session")
def screenshots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


@pytest.fixture(scope="module")
def provider():
    """A local OpenID provider (oidc-provider-mock) on loopback, for the sign-in tests (tests/e2e/signin.py)."""
    pytest.importorskip("oidc_provider_mock", reason="oidc-provider-mock is not installed")
    from tests.e2e.signin import provider_server

    with provider_server() as url:
        yield url


@pytest.fixture(scope="module")
def signin_app(provider, tmp_path_factory):
    """The app with native sign-in against ``provider``, a server per test module; yields (URL, ledger path)."""
    pytest.importorskip("authlib", reason="streamlit[auth] (Authlib) is not installed")
    from tests.e2e.signin import signin_server

    with signin_server(provider, tmp_path_factory.mktemp("signin")) as served:
        yield served
