"""Makes the shared test modules (`shared_data`, `cli_load`, ...) importable from every test
directory, and lays the run out for `pytest -n N` (pytest-xdist, as `scripts/test` runs it):

* every test module is one unit of work, sent whole to one worker, so that a module's
  fixtures are set up once; modules that share a keyspace or a loaded table are one unit
  (`GROUPS`); the Cassandra compliance suite is split in `SPLIT` units;
* the units that take minutes come first (`FIRST`), so that no worker is left with one of
  them at the end while the other idles.

All of it lives in `scheduling.py`. The units are made by our own scheduler
(`pytest_xdist_make_scheduler`), which keeps the suite's order of units: xdist's
`--dist loadgroup` reads `xdist_group` marks through a node attribute that pytest 9 no
longer has."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from scheduling import long_units_first, make_scheduler  # noqa: E402


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Put the long units first (`scheduling.FIRST`)."""
    long_units_first(items)


@pytest.hookimpl(optionalhook=True)  # `-p no:xdist` runs without the plugin
def pytest_xdist_make_scheduler(config: Any, log: Any) -> Any:
    """xdist's scope scheduling with our units as the scopes (`scheduling.make_scheduler`)."""
    return make_scheduler(config, log)
