"""`hoprag --version`: the installed distribution's version, read only when asked (reading
package metadata costs tens of milliseconds that every other command would pay)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any, NoReturn


def installed_version() -> str:
    """The version of the installed `hoprag` distribution (`importlib.metadata`), or a phrase
    saying there is none (a source tree run without installing it)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("hoprag")
    except PackageNotFoundError:
        return "(version unknown: not installed)"


class VersionAction(argparse.Action):
    """`--version`: print `hoprag <version>` on stdout and exit with status 0."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        """A flag that takes no value and stores nothing."""
        kwargs.setdefault("help", "print hoprag's version and exit")
        super().__init__(
            option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, nargs=0, **kwargs
        )

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> NoReturn:
        """Print the version line and exit."""
        print(f"hoprag {installed_version()}")
        parser.exit()
