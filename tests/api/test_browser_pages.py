"""The pages for people in a real headless Chromium (Debian's ``chromium`` and ``chromium-driver``, driven by
selenium) against a real server (`tests/api/server.py`) on a SQLite store seeded with a real CLEF topic
(tests/data/clef2019: 591 documents, 300 reviewed, a rest sample of 40) and idle topics whose names come first:

* the sign-in page (no key yet): its status text, and its form signs the browser in (the key kept in a cookie);
* the dashboard at 1,280 × 900 and 390 × 844: the most recently judged topic first with its status, the filter
  form works, nothing wider than the window;
* the HTML report at both sizes: the answer's status line, nothing wider than the window, the depth table whole
  (not scrolled) at 1,280 px, no `137.0000`;
* ``/docs`` and ``/redoc`` render, every file they load from this server;

and no page logs a browser console error (the sign-in page's one expected entry aside: its 401 status).

Without /usr/bin/chromium, /usr/bin/chromedriver or selenium the tests skip, saying which is missing, unless
``REVIEWDEPTH_REQUIRE_BROWSER=1`` (set by ``.ci/run``, which installs them), where they fail instead. With
``REVIEWDEPTH_SCREENSHOT_DIR=DIR`` each page is also saved as a full-page PNG in DIR (for a person to look at).
"""

from __future__ import annotations

import base64
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from reviewdepth.services.admin.keys import create_key
from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.answers.monitor import build_dashboard
from reviewdepth.services.answers.report import ReportOptions, build_report
from reviewdepth.services.files.imports import import_run
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.services.review.audit_stream import create_stream, next_documents
from reviewdepth.services.review.batches import BatchItem, record_batch
from reviewdepth.services.review.samples import draw_sample

from .server import Server, started_server

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
REQUIRE_ENV = "REVIEWDEPTH_REQUIRE_BROWSER"
SCREENSHOT_ENV = "REVIEWDEPTH_SCREENSHOT_DIR"
WINDOWS = ((1280, 900), (390, 844))
CLEF = Path(__file__).resolve().parents[1] / "data" / "clef2019"
TOPIC = "CD012551"
LONG_NAME = "A-idle-" + "x" * 60  # a name with no space to break at: it must wrap, not widen the page
WAIT = 30.0

# Every element outside a box that scrolls (or clips) sideways, whose box reaches past the window; the boxes that
# scroll are themselves checked. An empty list: nothing is wider than the window.
OVERFLOWING = """
const width = document.documentElement.clientWidth;
const clipped = (el) => {
  for (let up = el.parentElement; up && up !== document.body; up = up.parentElement) {
    if (['auto', 'scroll', 'hidden'].includes(getComputedStyle(up).overflowX)) return true;
  }
  return false;
};
const name = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
  (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\\s+/).join('.') : '');
const out = [];
for (const el of document.body.querySelectorAll('*')) {
  const box = el.getBoundingClientRect();
  if (box.width === 0 && box.height === 0) continue;
  if ((box.right > width + 0.5 || box.left < -0.5) && !clipped(el)) {
    out.push(`${name(el)} from ${Math.round(box.left)} to ${Math.round(box.right)}: ` +
             (el.textContent || '').trim().slice(0, 60));
  }
}
return out;
"""


def _missing(browser: Path, driver: Path) -> list[str]:
    missing = [str(path) for path in (browser, driver) if not path.exists()]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("the selenium package (pip install '.[test]')")
    return missing


def browser_or_skip(browser: Path = CHROMIUM, driver: Path = CHROMEDRIVER) -> None:
    """Skip, naming what is missing, when the browser, its driver or selenium is not here; fail instead under
    REVIEWDEPTH_REQUIRE_BROWSER=1 (CI, which installs them)."""
    missing = _missing(browser, driver)
    if missing:
        reason = (f"no browser to test the pages in: {', '.join(missing)} not found (Debian: apt-get install "
                  "chromium chromium-driver; .ci/run installs them)")
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"{reason}; {REQUIRE_ENV}=1 requires them")
        pytest.skip(reason)


def test_a_missing_browser_skips_or_fails(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # paths of this test's own, so the answer does not depend on what this machine has installed
    absent_browser, absent_driver = tmp_path / "chromium", tmp_path / "chromedriver"
    present_browser, present_driver = tmp_path / "bin-chromium", tmp_path / "bin-chromedriver"
    present_browser.touch()
    present_driver.touch()
    monkeypatch.delenv(REQUIRE_ENV, raising=False)
    with pytest.raises(pytest.skip.Exception) as skipped:
        browser_or_skip(absent_browser, present_driver)
    assert f"{absent_browser} not found" in str(skipped.value) or f"{absent_browser}, " in str(skipped.value)
    assert str(present_driver) not in str(skipped.value)
    with pytest.raises(pytest.skip.Exception) as skipped:
        browser_or_skip(present_browser, absent_driver)
    assert str(absent_driver) in str(skipped.value) and str(present_browser) not in str(skipped.value)
    with pytest.raises(pytest.skip.Exception) as skipped:
        browser_or_skip(absent_browser, absent_driver)
    assert f"{absent_browser}, {absent_driver}" in str(skipped.value)
    monkeypatch.setenv(REQUIRE_ENV, "1")
    with pytest.raises(pytest.fail.Exception, match=f"{REQUIRE_ENV}=1 requires them"):
        browser_or_skip(absent_browser, present_driver)


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """A headless Chromium under chromedriver, logging the browser console (`browser_or_skip` first)."""
    browser_or_skip()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     "--disable-extensions"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # the Debian driver by its path: selenium then looks for no driver and downloads nothing
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(WAIT)
    try:
        yield driver
    finally:
        driver.quit()


@dataclass
class Site:
    server: Server
    engine: Any
    secret: str


def _judge(engine: Any, topic: str, items: list[tuple[str, str]], role: str = "review") -> None:
    record_batch(engine, topic, [BatchItem(doc, label, role=role) for doc, label in items], reviewer="ana",
                 source="test")


def _seed(engine: Any) -> None:
    """Idle topics (a queue, no judgment) named to come first by name; the CLEF topic reviewed to rank 300 with a
    rest sample of 40 judged; then a small topic with an audit stream, judged last (so first on the dashboard)."""
    for name in ("A-idle-1", "A-idle-2", "A-idle-3", LONG_NAME):
        create_topic(engine, name)
        store_ranking(engine, name, "q", [RankedDocument(f"x{i}", float(-i)) for i in range(30)])
    import_run(engine, str(CLEF / f"{TOPIC}.sheffield-baseline.run"))
    labels = {line.split()[2]: line.split()[3] for line in (CLEF / f"{TOPIC}.abs.qrels").read_text().splitlines()}
    docs = [line.split()[2] for line in (CLEF / f"{TOPIC}.sheffield-baseline.run").read_text().splitlines()]
    _judge(engine, TOPIC, [(d, labels.get(d, "0")) for d in docs[:300]])
    sample = draw_sample(engine, TOPIC, 40, frame="unreviewed", seed=7)
    _judge(engine, TOPIC, [(d, labels.get(d, "0")) for d in sample.doc_ids], role="sample")
    small = [f"d{i:02d}" for i in range(40)]
    create_topic(engine, "T-audit")
    store_ranking(engine, "T-audit", "q", [RankedDocument(d, float(-i)) for i, d in enumerate(small)])
    relevant = {"d00", "d01", "d02", "d04", "d07", "d24"}
    _judge(engine, "T-audit", [(d, str(int(d in relevant))) for d in small[:20]])
    create_stream(engine, "T-audit", every=1, seed=0, reviewer="ana")
    served = [d.doc_id for d in next_documents(engine, "T-audit", count=12).documents]
    _judge(engine, "T-audit", [(d, str(int(d in relevant))) for d in served], role="audit")


@pytest.fixture(scope="module")
def site(sqlite_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    from reviewdepth.store.engine import create_engine_for

    folder = tmp_path_factory.mktemp("browser")
    shutil.copyfile(sqlite_template, folder / "store.db")
    url = f"sqlite:///{folder / 'store.db'}"
    engine = create_engine_for(url)
    try:
        _seed(engine)
        secret = create_key(engine, "rita", "read")[1]
        with started_server(url, folder) as server:
            yield Site(server, engine, secret)
    finally:
        engine.dispose()


def _window(driver: Any, width: int, height: int) -> None:
    """The page's viewport exactly ``width`` × ``height`` CSS pixels; a phone (touch, overlay scroll bars, the
    viewport meta tag honoured) under 600 px."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})


def _errors(driver: Any, allowed: str | None = None) -> list[dict[str, Any]]:
    """The console's SEVERE entries since the last call, but for those matching ``allowed``."""
    return [entry for entry in driver.get_log("browser")
            if entry["level"] == "SEVERE" and not (allowed and re.search(allowed, entry["message"]))]


def _fits(driver: Any, width: int) -> None:
    """Nothing wider than the window: the page does not scroll sideways, no element reaches past its right edge
    (but inside a box that scrolls), and the window is still ``width`` wide (a phone widens its layout to fit a
    page too wide for it)."""
    sizes = driver.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
    overflowing = driver.execute_script(OVERFLOWING)
    assert sizes[1] == width, f"the window is {sizes[1]} px wide, not {width}: {overflowing}"
    assert sizes[0] <= sizes[1], f"the page is {sizes[0]} px wide in a {sizes[1]} px window: {overflowing}"
    assert overflowing == []


def _screenshot(driver: Any, name: str) -> None:
    """The whole page as DIR/NAME.png when REVIEWDEPTH_SCREENSHOT_DIR=DIR."""
    folder = os.environ.get(SCREENSHOT_ENV)
    if not folder:
        return
    Path(folder).mkdir(parents=True, exist_ok=True)
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
    (Path(folder) / f"{name}.png").write_bytes(base64.b64decode(shot["data"]))


def _signed_in(driver: Any, site: Site) -> None:
    """Sign in through the sign-in page's form (the key then lives in the browser's cookie)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver.delete_all_cookies()
    driver.get(site.server.base + "/?target=0.95")
    assert driver.title == "reviewdepth: sign in"
    assert [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"] == [
        f"{site.server.base}/?target=0.95 - Failed to load resource: the server responded with a status of 401 "
        "(Unauthorized)"]  # the page is the dashboard's 401: Chromium logs that status, and nothing else is wrong
    driver.find_element(By.NAME, "key").send_keys(site.secret)
    driver.find_element(By.CSS_SELECTOR, "form button[type=submit]").click()
    WebDriverWait(driver, WAIT).until(lambda d: d.title == "reviewdepth: topics")
    assert "key=" not in driver.current_url  # the 303 took the key out of the address


def test_sign_in_page_then_the_dashboard_in_chromium(chromium: Any, site: Site) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver = chromium
    expected = {entry.topic: entry.state for entry in build_dashboard(site.engine).entries}
    for width, height in WINDOWS:
        _window(driver, width, height)
        driver.delete_all_cookies()
        driver.get(site.server.base + "/")
        assert driver.title == "reviewdepth: sign in"
        assert _errors(driver, rf"^{re.escape(site.server.base)}/ - .*status of 401") == []  # (as in _signed_in)
        status = driver.find_element(By.CSS_SELECTOR, ".status").text
        assert "missing API key" in status
        assert driver.find_element(By.NAME, "key").get_attribute("type") == "password"
        _fits(driver, width)
        _screenshot(driver, f"sign-in-{width}")

        _signed_in(driver, site)
        rows = driver.find_elements(By.CSS_SELECTOR, "tr.topic")
        names = [row.find_element(By.CSS_SELECTOR, "td b").text for row in rows]
        # the most recently judged first, the never-judged after them by name (A-idle-… would lead by name)
        assert names == ["T-audit", TOPIC, "A-idle-1", "A-idle-2", "A-idle-3", LONG_NAME]
        badges = [row.find_element(By.CSS_SELECTOR, ".badge").text for row in rows]
        assert badges == [expected[name] for name in names] and all(badges)
        headline = rows[1].find_element(By.CSS_SELECTOR, ".headline").text
        assert headline.startswith("95% recall: ") and expected[TOPIC] in headline
        assert "6 topics" in driver.find_element(By.CSS_SELECTOR, "p.small").text
        assert _errors(driver) == []
        _fits(driver, width)
        _screenshot(driver, f"dashboard-{width}")

        # the filter form (a GET form, no script): judged topics whose name contains "cd"
        driver.find_element(By.NAME, "q").send_keys("cd")
        driver.find_element(By.NAME, "judged").click()
        driver.find_element(By.CSS_SELECTOR, "form.filter button[type=submit]").click()
        WebDriverWait(driver, WAIT).until(lambda d: "q=cd" in d.current_url)
        rows = driver.find_elements(By.CSS_SELECTOR, "tr.topic")
        assert [row.find_element(By.CSS_SELECTOR, "td b").text for row in rows] == [TOPIC]
        assert driver.find_element(By.NAME, "q").get_attribute("value") == "cd"
        assert driver.find_element(By.NAME, "judged").is_selected()
        assert _errors(driver) == []
        _fits(driver, width)


def test_html_report_in_chromium(chromium: Any, site: Site) -> None:
    from selenium.webdriver.common.by import By

    driver = chromium
    driver.delete_all_cookies()
    driver.get(f"{site.server.base}/?key={site.secret}")  # the other way in: the key in the address, once
    assert driver.title == "reviewdepth: topics" and "key=" not in driver.current_url
    report = build_report(site.engine, TOPIC, ReportOptions())
    for width, height in WINDOWS:
        _window(driver, width, height)
        driver.get(f"{site.server.base}/topics/{TOPIC}/report?format=html")
        assert driver.title == f"reviewdepth report: {TOPIC}"
        lines = [p.text for p in driver.find_elements(By.CSS_SELECTOR, ".answer p")]
        assert lines and lines[0].startswith("95% recall: not reached") and report.answer.status == "not reached"
        assert len(lines) > 3 and max(map(len, lines)) > 80  # sentences whole, wrapped by the page, not at 80
        assert _errors(driver) == []
        _fits(driver, width)
        depth = driver.find_element(By.ID, "depth")
        if width >= 1280:  # the depth table whole: its box does not scroll
            assert driver.execute_script("return arguments[0].scrollWidth <= arguments[0].clientWidth", depth)
        else:  # a phone: one block per row
            assert driver.execute_script(
                "return getComputedStyle(arguments[0].querySelector('tbody tr')).display", depth) == "block"
        cells = [td.get_attribute("textContent") for td in driver.find_elements(By.TAG_NAME, "td")]
        assert not [c for c in cells if re.fullmatch(r"-?[\d,]+\.\d{4,}", c)], "a number printed as 137.0000"
        _screenshot(driver, f"report-{width}")


def test_docs_pages_render_from_this_server_in_chromium(chromium: Any, site: Site) -> None:
    """Swagger UI and ReDoc render, and every file the pages load (scripts, styles, images, the document) comes
    from this server: nothing from a CDN."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver = chromium
    _window(driver, 1280, 900)
    driver.delete_all_cookies()
    for path, selector in (("/docs", ".swagger-ui .info .title"), ("/redoc", "h1")):
        driver.get(site.server.base + path)
        title = WebDriverWait(driver, WAIT).until(lambda d, s=selector: d.find_elements(By.CSS_SELECTOR, s))
        assert title[0].text.startswith("reviewdepth"), path
        if path == "/docs":  # the operations are listed: the OpenAPI document was read
            WebDriverWait(driver, WAIT).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".opblock"))
        loaded = driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
        assert loaded and all(url.startswith(site.server.base + "/") for url in loaded), loaded
        assert _errors(driver) == [], path
        _screenshot(driver, path.strip("/"))
