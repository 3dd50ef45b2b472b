"""`hoprag link` as a user runs it: a JSONL file in, the same records with a `mentions` field
out (written whole), the report on stdout and as JSON; bad input refused with exit 2 before
any text is read, naming the problem, and no output file left behind."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hoprag.cli import main

RECORDS = [
    {"id": "turing", "title": "Alan Turing", "text": "He worked at Bletchley Park on Enigma."},
    {"id": "bp", "title": "Bletchley Park", "text": "Home of the codebreakers, Alan Turing too."},
    {"id": "enigma", "title": "Enigma machine", "text": "A cipher machine.", "year": 1923},
    {"id": "film", "title": "Enigma (film)", "text": "A 2001 film; not the Enigma machine."},
]


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_link_writes_every_record_with_its_mentions_and_a_report(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", RECORDS)
    out, report = tmp_path / "out.jsonl", tmp_path / "report.json"
    r = subprocess.run(
        [sys.executable, "-m", "hoprag.cli", "link", "--path", str(src), "--out", str(out),
         "--json", str(report)],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    got = read_jsonl(out)
    # Every record is kept as it was, with the new field; "Enigma" alone is the film's title
    # without its qualifier, found in "Enigma." but hidden inside "Enigma machine".
    assert [{k: v for k, v in g.items() if k != "mentions"} for g in got] == RECORDS
    assert {g["id"]: g["mentions"] for g in got} == {
        "turing": ["bp", "film"],
        "bp": ["turing"],
        "enigma": [],
        "film": ["enigma"],
    }
    assert "wrote 4 records" in r.stdout and "3 of 4 documents linked" in r.stdout
    figures = json.loads(report.read_text())
    assert figures["links"] == 4 and figures["linked"] == 3 and figures["field"] == "mentions"
    assert figures["mean_out_degree"] == 1.0


def test_link_takes_a_field_name_aliases_and_keeps_qualifiers_when_asked(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", RECORDS)
    aliases = tmp_path / "aliases.json"
    aliases.write_text(json.dumps({"enigma": ["the cipher"]}))
    out = tmp_path / "out.jsonl"
    code = main(["link", "--path", str(src), "--out", str(out), "--field", "cites_by_name",
                 "--aliases", str(aliases), "--keep-qualifiers"])  # fmt: skip
    assert code == 0
    got = {g["id"]: g["cites_by_name"] for g in read_jsonl(out)}
    assert got["turing"] == ["bp"]  # "Enigma" alone no longer names the film
    assert "mentions" not in read_jsonl(out)[0]


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--field", "title"], "--field must be a new field name, not 'title'"),
        (["--field", "$id"], "--field must be a new field name"),
        (["--min-chars", "0"], "min_chars must be an int of at least 1"),
        (["--max-shared", "0"], "max_shared must be an int of at least 1"),
        (["--max-share", "1.5"], "max_share must be a fraction in (0, 1]"),
        (["--aliases", "missing.json"], "--aliases missing.json does not exist"),
        (["--phrases", "mentions"], "--phrases must be a new field name other than --field"),
        (["--phrases", "text"], "--phrases must be a new field name"),
        (["--phrases", "names", "--phrase-docs", "1"], "--phrase-docs must be at least 2"),
    ],
)
def test_bad_link_options_are_exit_2_naming_them_and_write_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], says: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.chdir(tmp_path)
    src = write_jsonl(tmp_path / "in.jsonl", RECORDS)
    out = tmp_path / "out.jsonl"
    code = main(["link", "--path", str(src), "--out", str(out), *extra])
    assert code == 2
    assert says in capsys.readouterr().err
    assert not out.exists() and [p.name for p in tmp_path.iterdir()] == ["in.jsonl"]


def test_link_refuses_a_missing_file_a_bad_file_and_writing_over_its_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", RECORDS)
    assert main(["link", "--path", str(tmp_path / "nope.jsonl"), "--out", "x.jsonl"]) == 2
    assert "is not a file" in capsys.readouterr().err
    assert main(["link", "--path", str(src), "--out", str(src)]) == 2
    assert "--out must not be --path" in capsys.readouterr().err
    assert main(["link", "--path", str(src), "--out", str(tmp_path / "no" / "o.jsonl")]) == 2
    assert "does not exist" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "text": "x"}\n{"id": "a", "text": "y"}\n{"title": 3}\n')
    out = tmp_path / "out.jsonl"
    assert main(["link", "--path", str(bad), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "bad record field(s)" in err and "line 3" in err
    assert not out.exists()
    aliases = tmp_path / "aliases.json"
    aliases.write_text('{"a": "not a list"}')
    assert main(["link", "--path", str(src), "--out", str(out), "--aliases", str(aliases)]) == 2
    assert "must hold a JSON object {id: [alias, ...]}" in capsys.readouterr().err


def test_link_with_phrases_adds_the_names_records_share(tmp_path: Path) -> None:
    records = [
        {"id": "a", "title": "A", "text": "Shot at the Blue Lagoon by Ingrid Berg."},
        {"id": "b", "title": "B", "text": "The Blue Lagoon is warm."},
        {"id": "c", "title": "C", "text": "Ingrid Berg wrote it; nothing else."},
        {"id": "d", "title": "D", "text": "No names here."},
    ]
    src = write_jsonl(tmp_path / "in.jsonl", records)
    out, report = tmp_path / "out.jsonl", tmp_path / "report.json"
    r = subprocess.run([sys.executable, "-m", "hoprag.cli", "link", "--path", str(src), "--out",
                        str(out), "--phrases", "names", "--json", str(report)],
                       capture_output=True, text=True, check=False, timeout=120)  # fmt: skip
    assert r.returncode == 0, r.stderr
    got = {g["id"]: g["names"] for g in read_jsonl(out)}
    assert got == {"a": ["blue lagoon", "ingrid berg"], "b": ["blue lagoon"],
                   "c": ["ingrid berg"], "d": []}  # fmt: skip
    assert "3 of 4 records share a name in 'names'" in r.stdout
    figures = json.loads(report.read_text())
    assert figures["phrases_field"] == "names" and figures["phrased"] == 3


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--table", "docs", "--out", "o.jsonl"], "give it without --path and --out"),
        (["--table", "docs", "--path", "in.jsonl"], "give it without --path and --out"),
        (["--path", "in.jsonl"], "give --path and --out (a JSONL file), or --table"),
        ([], "give --path and --out (a JSONL file), or --table"),
        (["--table", "docs", "--field", "title"], "--field must be a new field name"),
        (["--table", "docs", "--keyspace", "no-such"], "keyspace 'no-such' is not a plain"),
        (["--table", "no-such"], "table 'no-such' is not a plain name"),
        (["--path", "in.jsonl", "--out", "o.jsonl", "--overwrite"], "--overwrite applies to"),
    ],
)
def test_link_of_a_table_is_refused_naming_the_problem_before_connecting(
    capsys: pytest.CaptureFixture[str], args: list[str], says: str
) -> None:
    # No node listens on port 1: a check that came after connecting would fail otherwise.
    code = main(["link", *args, "--contact-points", "127.0.0.1:1"])
    assert code == 2
    assert says in capsys.readouterr().err


@pytest.mark.parametrize("clash", ["--path", "--out", "--aliases"])
def test_link_refuses_a_json_report_over_its_input_or_output_and_keeps_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    clash: str,
) -> None:  # fmt: skip
    monkeypatch.chdir(tmp_path)
    src = write_jsonl(tmp_path / "in.jsonl", RECORDS)
    aliases = tmp_path / "aliases.json"
    aliases.write_text('{"turing": ["Turing"]}')
    out = tmp_path / "out.jsonl"
    out.write_text("kept\n")
    given = {"--path": src, "--out": out, "--aliases": aliases}
    before = {p: p.read_bytes() for p in given.values()}
    # The same file through another spelling: relative, and resolved only by the check.
    report = f"./sub/../{given[clash].name}"
    (tmp_path / "sub").mkdir()
    code = main(["link", *[str(x) for kv in given.items() for x in kv], "--json", report])
    assert code == 2
    err = capsys.readouterr().err
    assert f"--json {report} is the same file as {clash}" in err
    assert {p: p.read_bytes() for p in given.values()} == before
