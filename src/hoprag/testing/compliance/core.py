"""What every store must do with only the required methods (`aprepare`, `aadd` and the
prepared query's `asearch`, `aget`, `aadjacent`, `aadjacent_many`): the reads, the filter
language, the metadata type model and writes, one contract each."""

from __future__ import annotations

from hoprag.testing.compliance.filter_language import FilterCompliance
from hoprag.testing.compliance.reads import ReadCompliance
from hoprag.testing.compliance.type_model import TypeModelCompliance
from hoprag.testing.compliance.writes import WriteCompliance


class CoreCompliance(ReadCompliance, FilterCompliance, TypeModelCompliance, WriteCompliance):
    """Every contract a store with only the required methods passes without deviations."""
