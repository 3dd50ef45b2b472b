"""`hoprag --version` prints the installed distribution's version on stdout and exits 0."""

from __future__ import annotations

from importlib.metadata import version

import pytest

from hoprag.cli import main


def test_version_prints_the_installed_distributions_version_and_exits_0(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    out, err = capsys.readouterr()
    assert (out, err) == (f"hoprag {version('hoprag')}\n", "")


def test_version_is_listed_in_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "--version" in capsys.readouterr().out
