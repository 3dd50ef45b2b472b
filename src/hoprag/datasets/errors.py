"""Errors raised by the dataset loaders."""

from __future__ import annotations

from dataclasses import dataclass

from hoprag.errors import HopragError, InvalidInputError


class DatasetNotInstalledError(HopragError, LookupError):
    """The package that carries a dataset's files is not installed; the message names the
    missing files and the command that installs them."""


class UnknownDatasetError(HopragError, KeyError):
    """`hoprag.datasets.load` was given a name it does not know; the message lists the known
    names."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


@dataclass(frozen=True, slots=True)
class RecordError:
    """One problem in one record of a JSONL file: the 1-based `line`, the `field` at fault
    (`None` when the whole line is bad, e.g. not JSON) and a human-readable `message`."""

    line: int
    field: str | None
    message: str

    def __str__(self) -> str:
        where = f"line {self.line}" + (f", field {self.field!r}" if self.field else "")
        return f"{where}: {self.message}"


class JsonlValidationError(InvalidInputError):
    """A JSONL file has bad records. `errors` lists every problem found (all of them, not just
    the first), each with its line number and field; `path` is the file."""

    def __init__(self, path: str, errors: list[RecordError]) -> None:
        self.path = path
        self.errors = list(errors)
        shown = "\n".join(f"  {e}" for e in self.errors[:20])
        more = f"\n  ... and {len(self.errors) - 20} more" if len(self.errors) > 20 else ""
        super().__init__(f"{path}: {len(self.errors)} bad record field(s):\n{shown}{more}")
