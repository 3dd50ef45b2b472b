"""`hoprag delete`'s argument checks, before anything connects: ids from a file or from
standard input (`--ids-file -`), one per line, blank lines skipped; the node-side command is
tested in tests/integration/test_delete_cassandra.py."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from hoprag.cli.common import CliError
from hoprag.cli.delete import plan_delete
from hoprag.cli.parser import build_parser


def _plan(*args: str):  # type: ignore[no-untyped-def]
    return plan_delete(build_parser().parse_args(["delete", "--table", "arts", *args]))


def test_ids_file_dash_reads_the_ids_from_standard_input(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("a1\n\na2\r\na1\n"))
    assert _plan("--ids-file", "-").request.ids == ["a1", "a2"]


def test_an_ids_file_gives_one_id_a_line(tmp_path: Path) -> None:
    path = tmp_path / "gone.txt"
    path.write_text("x 1\ny\n")
    plan = _plan("--ids-file", str(path), "--dry-run")
    assert plan.request.ids == ["x 1", "y"] and plan.dry_run


def test_an_empty_id_on_the_command_line_is_exit_2_naming_the_flag() -> None:
    with pytest.raises(CliError, match="--id: ") as info:
        _plan("--id", "")
    assert info.value.code == 2
