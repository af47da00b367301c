"""A real headless Chromium (Debian's, through its chromedriver) against a real ``conveyor local``.

Nothing is downloaded at test time: the browser and driver are the packages the Makefile installs, and
Selenium is given the driver's path so its manager looks for nothing. Without them the tests are skipped,
saying why; in CI (CI=true) they fail instead, since CI must run them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.test_local_stack import KNOWN_KEY, LocalStack

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
SCREENSHOTS = Path(__file__).resolve().parents[1] / "artifacts" / "browser"


def _require_chromium() -> None:
    missing = [str(path) for path in (CHROMIUM, CHROMEDRIVER) if not path.exists()]
    if missing:
        reason = f"{', '.join(missing)} missing: `make test` installs chromium and chromium-driver as root"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    """The local stack, its runners heartbeating twice a second so a cancel lands quickly."""
    _require_chromium()
    local = LocalStack.start(tmp_path_factory.mktemp("stack"), api_key=KNOWN_KEY, CONVEYOR_HEARTBEAT_SECONDS="0.5")
    try:
        yield local.wait_until_ready()
    finally:
        local.stop()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    _require_chromium()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}",
        "--window-size=1280,900",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=str(CHROMEDRIVER)))
    driver.set_page_load_timeout(30)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Keep each phase's outcome on the test, so a fixture can photograph the page of a test that failed."""
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report
