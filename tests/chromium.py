"""Chromium for the browser tests: Debian's ``chromium`` driven by Playwright (no browser
download), started once per test module by the
``browser`` fixture (tests/conftest.py). Under CI a missing piece fails the test; elsewhere it
skips with the reason in one line."""

import os

import pytest

CHROMIUM = os.environ.get("ATTNCOURSE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-quic", "--disable-dev-shm-usage"]


def unavailable(reason):
    """Say why in one line: a failure under CI (it must run there), a skip elsewhere."""
    if os.environ.get("CI"):
        pytest.fail(f"browser test cannot run: {reason}", pytrace=False)
    pytest.skip(reason)
