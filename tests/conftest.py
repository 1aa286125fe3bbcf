"""Test-run wiring: under pytest-xdist (`make test` runs two workers, `--dist loadgroup`) every test
marked ``ray`` runs on one worker, one after another, so that two Ray runtimes never share the
machine's cores and the tests that time Ray's start and stop measure Ray, not a second Ray beside it.
Figures a test drew and left open are closed after it."""
import os
import sys

import pytest


def pytest_collection_modifyitems(config, items):
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        if item.get_closest_marker("ray"):
            item.add_marker(pytest.mark.xdist_group("ray"))


def pytest_configure(config):
    # each of the N workers on N cores gets one thread: torch's default (every core) in every worker
    # oversubscribes the cores many times over
    if os.environ.get("PYTEST_XDIST_WORKER"):
        os.environ.setdefault("OMP_NUM_THREADS", "1")


@pytest.fixture(autouse=True)
def _close_figures():
    # tests that assert on a returned figure leave it open; pyplot keeps every one (and warns past 20)
    yield
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        pyplot.close("all")
