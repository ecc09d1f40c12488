"""Fixtures shared by the test modules: ``browser``, a headless Chromium (tests/chromium.py)."""

from pathlib import Path

import pytest
from chromium import CHROMIUM, CHROMIUM_ARGS, unavailable


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("playwright is not installed (pip install playwright)")
    if not Path(CHROMIUM).exists():
        unavailable(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    with sync_playwright() as p:
        try:
            chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                         headless=True, timeout=60_000)
        except Exception as exc:  # report the first line of Playwright's long message
            unavailable(f"Chromium could not start: {str(exc).strip().splitlines()[0]}")
        yield chromium
        chromium.close()
