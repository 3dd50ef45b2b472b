"""The `hoprag` command's argument handling: edge and filter syntax, clear one-line errors."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from hoprag.cli import (
    CliError,
    build_parser,
    error_text,
    main,
    make_strategy,
    parse_edges_arg,
    parse_filter_arg,
    print_table,
)
from hoprag.cli.load import LoadPlan, plan_load
from hoprag.documents import Node
from hoprag.documents import Path as Path_
from hoprag.strategies import MISSING_SCORE, Scored, field_scorer, similarity_scorer
from hoprag.termsafe import safe, safe_json


def test_edges_argument_parses_pairs_including_id() -> None:
    assert parse_edges_arg("keywords:keywords, links:$id") == [
        ("keywords", "keywords"),
        ("links", "$id"),
    ]


@pytest.mark.parametrize("bad", ["", "keywords", "a:", ":b", ","])
def test_malformed_edges_argument_is_a_clear_error(bad: str) -> None:
    with pytest.raises(CliError, match="--edges") as info:
        parse_edges_arg(bad)
    assert info.value.code == 2


def test_filter_values_are_json_when_they_parse_and_strings_otherwise() -> None:
    assert parse_filter_arg(["type=mammal", "legs=4", "wild=true", 'name="4"']) == {
        "type": "mammal",
        "legs": 4,
        "wild": True,
        "name": "4",
    }
    assert parse_filter_arg([]) is None
    with pytest.raises(CliError, match="FIELD=VALUE"):
        parse_filter_arg(["nofield"])


def test_bad_strategy_parameter_is_one_line_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["query", "q", "--table", "t", "--edges", "a:b", "--select-k", "-3"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("hoprag: error: bad eager parameters")
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_invalid_jsonl_is_reported_with_line_numbers_before_connecting(tmp_path: Path) -> None:
    f = tmp_path / "bad.jsonl"
    f.write_text(
        json.dumps({"id": "a", "text": "fine"})
        + "\n{not json\n"
        + json.dumps({"id": "b", "text": "x", "references": "a"})
        + "\n"
    )
    # No Cassandra at this address: the validation error must come before any connection.
    r = subprocess.run(
        [sys.executable, "-m", "hoprag.cli", "load", "jsonl", "--path", str(f),
         "--embedding", "hash:8", "--contact-points", "127.0.0.254:1"],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert r.returncode == 2
    assert "line 2" in r.stderr and "line 3, field 'references'" in r.stderr
    assert "Traceback" not in r.stderr


def test_unknown_embedding_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["query", "q", "--table", "t", "--edges", "a:b", "--embedding", "word2vec"])
    assert code == 2
    assert "unknown --embedding 'word2vec'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--consistency", "SOMETIMES", "--consistency must be one of"),
        ("--replication-factor", "0", "replication_factor must be 1..10"),
    ],
)
def test_bad_cluster_options_of_load_are_refused_before_connecting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, value: str, message: str
) -> None:
    f = tmp_path / "one.jsonl"
    f.write_text(json.dumps({"id": "a", "text": "fine"}) + "\n")
    # No Cassandra at this address: the error must come before any connection.
    code = main(["load", "jsonl", "--path", str(f), "--embedding", "hash:8",
                 "--contact-points", "127.0.0.254:1", flag, value])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and "Traceback" not in err


def test_bad_ann_overquery_is_refused_before_connecting(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["query", "q", "--table", "t", "--edges", "a:b", "--ann-overquery", "0",
                 "--contact-points", "127.0.0.254:1"])  # fmt: skip
    assert code == 2
    assert "--ann-overquery must be an int in 1..16, got 0" in capsys.readouterr().err


def _hoprag(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hoprag.cli", *args], capture_output=True,
                          text=True, check=False, timeout=120)  # fmt: skip


@pytest.mark.parametrize(
    "command",
    [
        ["stats"],
        ["query", "q", "--table", "t", "--edges", "a:b"],
        ["load", "foldoc", "--limit", "3", "--embedding", "hash:8"],
    ],
)
def test_no_node_answering_is_one_line_naming_the_contact_point(command: list[str]) -> None:
    r = _hoprag(*command, "--contact-points", "127.0.0.1:1")
    assert r.returncode == 1
    assert "Traceback" not in r.stderr
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith("hoprag: error: no Cassandra node answered at 127.0.0.1:1 ")


def test_missing_foldoc_names_the_files_in_the_missing_directory(tmp_path: Path) -> None:
    where = tmp_path / "share" / "dictd"
    r = _hoprag("load", "foldoc", "--path", str(where), "--embedding", "hash:8",
                "--contact-points", "127.0.0.254:1")  # fmt: skip
    assert r.returncode == 1 and "Traceback" not in r.stderr
    (line,) = r.stderr.strip().splitlines()
    assert f"{where}/foldoc.index" in line and f"{where}/foldoc.dict.dz" in line
    assert "apt-get install dict-foldoc" in line


def test_missing_foldoc_at_the_default_place_names_its_real_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hoprag.datasets import foldoc
    from hoprag.datasets.errors import DatasetNotInstalledError

    monkeypatch.setattr(foldoc, "DEFAULT_DIR", tmp_path / "dictd")
    with pytest.raises(DatasetNotInstalledError) as info:
        foldoc.read_foldoc()
    assert f"{tmp_path}/dictd/foldoc.index" in str(info.value)
    assert f"{tmp_path}/dictd/foldoc.dict.dz" in str(info.value)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--lambda-mult", "0.5"], "--lambda-mult applies to --strategy mmr, not eager"),
        (["--beam-width", "3"], "--beam-width applies to --strategy beam, not eager"),
        (["--score-field", "year"], "--score-field applies to --strategy scored, not eager"),
        (["--strategy", "mmr", "--lambda-mult", "2"], "bad mmr parameters"),
        (["--strategy", "beam", "--beam-width", "0"], "bad beam parameters"),
        (["--strategy", "scored", "--select-k", "-1"], "bad scored parameters"),
        (["--strategy", "scored", "--score-field", ""], "--score-field"),
    ],
)
def test_strategy_options_are_checked_before_connecting(
    capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    code = main(["query", "q", "--table", "t", "--edges", "a:b", *extra,
                 "--contact-points", "127.0.0.254:1"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"hoprag: error: {message}") and len(err.strip().splitlines()) == 1


def _node(id_: str, metadata: dict[str, object], similarity: float = 0.5) -> Node:
    return Node(id=id_, content="", depth=0, similarity_score=similarity, embedding=None,
                metadata=metadata, incoming_edges=frozenset(), outgoing_edges=frozenset(),
                path=Path_(nodes=(id_,)))  # fmt: skip


def test_score_field_scores_numbers_and_ranks_the_rest_lowest() -> None:
    score = field_scorer("year")
    assert score(_node("a", {"year": 1999})) == 1999.0
    assert score(_node("b", {"year": 2.5})) == 2.5
    for bad in ({}, {"year": "1999"}, {"year": True}, {"year": None}, {"year": [1]}):
        assert score(_node("c", bad)) == MISSING_SCORE
    assert field_scorer("info.year")(_node("d", {"info": {"year": 7}})) == 7.0
    assert similarity_scorer(_node("e", {}, similarity=0.25)) == 0.25


def test_scored_strategy_is_built_with_the_field_or_the_similarity() -> None:
    args = build_parser().parse_args(["query", "q", "--table", "t", "--edges", "a:b",
                                      "--strategy", "scored", "--select-k", "4"])  # fmt: skip
    default = make_strategy(args)
    assert isinstance(default, Scored) and default.scorer is similarity_scorer
    args.score_field = "year"
    by_field = make_strategy(args)
    assert isinstance(by_field, Scored)
    assert by_field.scorer(_node("a", {"year": 3})) == 3.0 and by_field.select_k == 4


def test_query_help_documents_every_strategy_and_the_score_field() -> None:
    r = _hoprag("query", "--help")
    assert r.returncode == 0
    text = " ".join(r.stdout.split())
    for phrase in ("--score-field", "nodes without it rank last", "--lambda-mult",
                   "--beam-width", "--stream", "--explain", "--root", "--filter"):  # fmt: skip
        assert phrase in text, phrase


# --- every argument checked before connecting (issue 17, defects 7 and 8) ---------------------

NOBODY = "127.0.0.1:1"
"""An address where nothing answers: a mistake reported here was found before connecting."""


def _one_error_line(r: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in r.stderr and "no Cassandra node answered" not in r.stderr, r.stderr
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith("hoprag: error: ")
    return line


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--edges", "$foo:bar"], "names starting with '$' are reserved"),
        (["--edges", "a..b:c"], "got 'a..b'"),
        (["--edges", "a=b:a=b"], "no '='"),
        (["--edges", "a:b:c"], "--edges item 'a:b:c' is not FROM:TO"),
        (["--edges", "a:b", "--start-k", "5000"], "--start-k must be at most 1000"),
        (["--edges", "a:b", "--adjacent-k", "5000"], "--adjacent-k must be at most 1000"),
        (["--edges", "a:b", "--filter", "a=NaN"], "must be a finite number (JSON has no NaN"),
        (["--edges", "a:b", "--filter", "a=1e400"], "must be a finite number (JSON has no NaN"),
        (["--edges", "a:b", "--filter", 'a={"x":1}'], "use a dotted field name"),
        (["--edges", "a:b", "--filter", "a=[1,[2]]"], "an element of filter['a']"),
        (["--edges", "a:b", "--filter", "a=1", "--filter", "a=2"], "names the field 'a' twice"),
        (["--edges", "a:b", "--filter", "a=" + "9" * 5001], "a number too long"),
        (["--edges", "a:b", "--filter", "a=" + "[" * 3000], "nested too deeply"),
        (["--edges", "a:b", "--filter", "a..b=1"], "a filter field name"),
        (["--edges", "a:b", "--root", ""], "every id in --root must be a non-empty string"),
        (["--edges", "a:b", "--lambda-mult", "0.3"], "--lambda-mult applies to --strategy mmr"),
        (["--edges", "a:b", "--strategy", "beam", "--lambda-mult", "0.3"], "not beam"),
        (["--edges", "a:b", "--strategy", "mmr", "--beam-width", "2"], "not mmr"),
        (["--edges", "a:b", "--strategy", "mmr", "--score-field", "x"], "not mmr"),
        (["--edges", "a:b", "--json", "--stream"], "--stream applies to the text output"),
        (["--edges", "a:b", "--json", "--explain"], "--explain applies to the text output"),
        (["--edges", "a:b", "--keyspace", "bad ks"], "keyspace 'bad ks' is not a plain name"),
        (["--edges", "a:b", "--speculation", "fast"], "--speculation must be one of 'auto'"),
        (["--edges", "a:b", "--speculation", "-3"], "or an int >= 0, got '-3'"),
    ],
)
def test_query_mistakes_are_exit_2_before_connecting(extra: list[str], message: str) -> None:
    r = _hoprag("query", "q", "--table", "t", *extra, "--contact-points", NOBODY)
    line = _one_error_line(r)
    assert r.returncode == 2 and message in line, line


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--table", "bad name"], "table 'bad name' is not a plain name"),
        (["--table", ""], "table '' is not a plain name"),
        (["--keyspace", "x;drop"], "keyspace 'x;drop' is not a plain name"),
    ],
)
def test_stats_mistakes_are_exit_2_before_connecting(args: list[str], message: str) -> None:
    r = _hoprag("stats", *args, "--contact-points", NOBODY)
    line = _one_error_line(r)
    assert r.returncode == 2 and message in line, line


def test_edges_item_with_two_colons_is_an_error_not_a_field_with_a_colon() -> None:
    with pytest.raises(CliError, match="'a:b:c' is not FROM:TO"):
        parse_edges_arg("a:b:c")
    assert parse_edges_arg(" a.b : $id ") == [("a.b", "$id")]


def test_filter_values_may_be_operator_dicts_of_the_filter_language() -> None:
    got = parse_filter_arg(['year={"$gte": 1990, "$lt": 2000}', 'genre={"$in": ["War", "Drama"]}'])
    assert got == {"year": {"$gte": 1990, "$lt": 2000}, "genre": {"$in": ["War", "Drama"]}}
    with pytest.raises(CliError, match=r"\$regex"):
        parse_filter_arg(['title={"$regex": "^A"}'])
    with pytest.raises(CliError, match="a range on a text field"):
        parse_filter_arg(['title={"$gt": "abc"}'])


def test_filter_naming_a_field_twice_is_an_error_not_the_last_value() -> None:
    with pytest.raises(CliError, match="names the field 'a' twice"):
        parse_filter_arg(["a=1", "b=x", "a=2"])


def _load(path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return _hoprag("load", "jsonl", "--path", str(path), "--embedding", "hash:8",
                   "--contact-points", NOBODY, *extra)  # fmt: skip


@pytest.mark.parametrize(
    ("bad", "field"),
    [("NaN", "score"), ("Infinity", "score"), ("1e400", "score"), ('"\\ud800"', "score")],
)
def test_load_refuses_numbers_json_has_not_and_lone_surrogates_before_connecting(
    tmp_path: Path, bad: str, field: str
) -> None:
    lines = [json.dumps({"id": f"r{i}", "text": "t"}) for i in range(400)]
    lines[300] = f'{{"id": "r300", "text": "t", "score": {bad}}}'
    f = tmp_path / "a.jsonl"
    f.write_text("\n".join(lines) + "\n")
    r = _load(f)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    head, detail = r.stderr.strip().splitlines()
    assert head == f"hoprag: error: {f}: 1 bad record field(s):"
    assert detail.startswith(f"  line 301, field '{field}': ")


def _deep(tmp_path: Path) -> Path:
    f = tmp_path / "deep.jsonl"
    f.write_text('{"id": "a", "text": "t"}\n{"id": "b", "a": ' + "[" * 3000 + "]" * 3000 + "}\n")
    return f


def _binary(tmp_path: Path) -> Path:
    f = tmp_path / "binary.jsonl"
    f.write_bytes(bytes(range(256)) * 64)
    return f


def _huge_int(tmp_path: Path) -> Path:
    f = tmp_path / "int.jsonl"
    f.write_text('{"id": "a", "text": "t"}\n{"id": "b", "text": "t"}\n{"id": "c", "n": '
                 + "1" * 5001 + "}\n")  # fmt: skip
    return f


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (_deep, "line 2: not readable JSON: nested too deeply"),
        (_binary, "line 1: not a text file: a NUL byte at column 1"),
        (_huge_int, "line 3, field 'n': an integer of 5001 digits is too long"),
    ],
)
def test_unreadable_jsonl_lines_are_one_line_with_the_line_number(
    tmp_path: Path, make: Callable[[Path], Path], expected: str
) -> None:
    r = _load(make(tmp_path))
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    head, detail = r.stderr.strip().splitlines()
    assert head.endswith(": 1 bad record field(s):") and detail.startswith(f"  {expected}")


@pytest.mark.parametrize("text", ["", "\n\n  \n"])
def test_empty_or_blank_jsonl_is_an_error_not_an_empty_complete_load(
    tmp_path: Path, text: str
) -> None:
    f = tmp_path / "empty.jsonl"
    f.write_text(text)
    line = _one_error_line(r := _load(f))
    assert r.returncode == 2 and "holds no records" in line


@pytest.mark.parametrize("batch", ["0", "-5"])
def test_load_batch_below_one_is_refused(tmp_path: Path, batch: str) -> None:
    f = tmp_path / "one.jsonl"
    f.write_text(json.dumps({"id": "a", "text": "t"}) + "\n")
    line = _one_error_line(r := _load(f, "--batch", batch))
    assert r.returncode == 2 and line == f"hoprag: error: --batch must be >= 1, got {batch}"


# --- terminal-safe output (issue 17, defect 12) -----------------------------------------------

HOSTILE = "a\x1b[2J\r\nfake  0  1.000  row\x07\x00\x7f\x9b31m\u202eevil\u2028\ud800"


def test_safe_escapes_controls_bidi_separators_and_surrogates_visibly() -> None:
    shown = safe(HOSTILE)
    assert shown == (
        "a\\x1b[2J\\x0d\\x0afake  0  1.000  row\\x07\\x00\\x7f\\x9b31m\\u202eevil\\u2028\\ud800"
    )
    assert shown.isprintable() and shown.isascii()
    assert safe("Zürich 東京 tab-free") == "Zürich 東京 tab-free"


def test_safe_json_is_exact_json_without_raw_control_characters() -> None:
    doc = {"id": HOSTILE, HOSTILE: [HOSTILE, 1.5, None], "plain": "Zürich"}
    text = safe_json(doc)
    assert json.loads(text) == doc
    assert all(c.isprintable() or c in "\n " for c in text) and "Zürich" in text


def test_table_rows_of_hostile_ids_and_edge_values_are_one_line_each() -> None:
    from hoprag.edges import MetadataEdge

    start = _node(HOSTILE, {})
    # Stores and edges refuse lone surrogates (they have no UTF-8 form); every other
    # hostile character can reach a stored value.
    edge = MetadataEdge("k", HOSTILE.replace("\ud800", ""))
    hop = Node(id="b\rb", content="", depth=1, similarity_score=0.5, embedding=None,
               metadata={}, incoming_edges=frozenset(), outgoing_edges=frozenset(),
               path=Path_(nodes=(HOSTILE, "b\rb"), edges=(edge,)))  # fmt: skip
    out = io.StringIO()
    print_table([start, hop], out)
    text = out.getvalue()
    assert len(text.splitlines()) == 3 and all(line.isprintable() for line in text.splitlines())
    assert not any(c in text for c in "\x1b\r\x07\x00\x7f\x9b\u202e\u2028")
    assert "--k=a\\x1b[2J" in text.splitlines()[2]


def test_error_messages_escape_what_the_user_data_holds() -> None:
    from hoprag.datasets import JsonlValidationError, RecordError

    text = error_text(ValueError(f"bad id {HOSTILE}"))
    assert "\n" not in text and "\x1b" not in text and "\\x1b[2J" in text
    jsonl = JsonlValidationError("f\x1b.jsonl", [RecordError(3, "x\ry", "bad\nvalue")])
    assert error_text(jsonl).splitlines() == [
        "f\\x1b.jsonl: 1 bad record field(s):",
        "  line 3, field 'x\\ry': bad\\x0avalue",
    ]


def test_load_jsonl_of_a_missing_file_or_a_directory_is_a_mistake(tmp_path: Path) -> None:
    for where in (tmp_path / "missing.jsonl", tmp_path):
        line = _one_error_line(r := _load(where))
        assert r.returncode == 2 and line.endswith("is not a file (hoprag load jsonl reads one)")


def test_ask_prints_the_tools_own_title_and_year_fields(capsys: pytest.CaptureFixture[str]) -> None:
    from hoprag.cli.ask import print_ask_answer
    from hoprag.tools.answer import ToolAnswer

    people = [_node("curie", {"name": "Marie Curie", "born": 1867, "title": "not this"}, 0.9)]
    answer = ToolAnswer(nodes=people, text="", statements=[], title_field="name",
                        year_field="born")  # fmt: skip
    print_ask_answer(answer, explain=False)
    header, row = capsys.readouterr().out.splitlines()
    assert header.split() == ["#", "id", "born", "score", "name"]
    assert row.split() == ["1", "curie", "1867", "0.900", "Marie", "Curie"]


def test_a_filter_date_beyond_year_1_at_utc_is_exit_2_naming_the_flag(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Issue #28, 6: the bound's UTC instant is before year 1; it was a traceback."""
    bound = '{"$gte": "0001-01-01T00:00:00+23:59"}'
    code = main(["query", "q", "--table", "t", "--edges", "a:a", "--filter", f"on={bound}"])
    err = capsys.readouterr().err
    assert code == 2
    assert "--filter" in err and "filter['on']['$gte']" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--embedding", "hash:0"], "--embedding hash:DIM"),
        (["--embedding", "hash:²"], "--embedding hash:DIM"),
        (["--embedding", "hash:99999"], "--embedding hash:DIM"),
        (["--speculation", "²"], "--speculation"),
        (["--contact-points", "127.0.0.1:²"], "bad port"),
    ],
)
def test_a_bad_flag_value_is_exit_2_naming_the_flag_not_a_failure(
    capsys: pytest.CaptureFixture[str], flags: list[str], named: str
) -> None:
    """Issue #28, 15: these exited 1 with "ValueError: ..."."""
    code = main(["query", "q", "--table", "t", "--edges", "a:a", *flags])
    err = capsys.readouterr().err
    assert code == 2, err
    assert named in err and "ValueError" not in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        ([], "--topic"),  # nothing to rank by and nothing to list
        (["--topic", "war", "--actor", "!!!"], "--actor"),  # no letter or digit
        (["--topic", "war", "--year-to", str(2**63)], "--year-to"),  # beyond the filter's int64
        (["--topic", "war", "--access-filter", "[1]"], "--access-filter"),  # not a filter
    ],
)
def test_hoprag_ask_checks_the_whole_call_before_it_connects(
    capsys: pytest.CaptureFixture[str], flags: list[str], named: str
) -> None:
    """Issue #28, 11: these reached the node ("no Cassandra node answered", exit 1)."""
    code = main(["ask", *flags, "--contact-points", "127.0.0.1:1"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith(f"hoprag: error: {named}:") and "127.0.0.1:1" not in err


# --- load --sync and a changed source (issue 49) ----------------------------------------------


def test_load_sync_with_restart_is_refused_before_connecting(tmp_path: Path) -> None:
    f = tmp_path / "one.jsonl"
    f.write_text(json.dumps({"id": "a", "text": "t"}) + "\n")
    line = _one_error_line(r := _load(f, "--sync", "--restart"))
    assert r.returncode == 2
    assert line == ("hoprag: error: --sync compares the source with the table, whatever an "
                    "earlier load did; --restart has no meaning with it")  # fmt: skip


def _plan(tmp_path: Path, text: str, *extra: str) -> LoadPlan:
    f = tmp_path / "mine.jsonl"
    f.write_text(text)
    args = build_parser().parse_args(["load", "jsonl", "--path", str(f), "--table", "mine",
                                      "--embedding", "hash:8", *extra])  # fmt: skip
    return plan_load(args)


def test_the_load_source_changes_with_the_files_content_not_its_name(tmp_path: Path) -> None:
    first = _plan(tmp_path, '{"id": "a", "text": "one"}\n')
    same = _plan(tmp_path, '{"id": "a", "text": "one"}\n')
    edited = _plan(tmp_path, '{"id": "a", "text": "one, edited"}\n')
    assert first.source == same.source
    assert edited.source != first.source
    described = json.loads(edited.source)
    assert described["digest"].startswith("sha256:") and described["dataset"] == "jsonl"


def test_the_change_notice_names_the_file_only_when_its_content_changed(tmp_path: Path) -> None:
    from hoprag.cli.load_source import change_notice
    from hoprag.stores.cassandra.catalog import CatalogEntry

    before = _plan(tmp_path, '{"id": "a", "text": "one"}\n')
    after = _plan(tmp_path, '{"id": "a", "text": "two"}\n')

    def entry(source: str) -> CatalogEntry:
        return CatalogEntry("mine", source, "hash:8", 8, 1, True)

    assert change_notice(None, after) is None
    assert change_notice(entry(after.source), after) is None
    assert change_notice(entry(before.source), after) == (
        f"{after.path} changed since the earlier load: loading it again from the first record"
    )
    undigested = json.loads(after.source)
    del undigested["digest"]
    assert "may have changed since the earlier load (which recorded no digest of it)" in str(
        change_notice(entry(json.dumps(undigested)), after)
    )
    other_limit = _plan(tmp_path, '{"id": "a", "text": "one"}\n', "--limit", "5")
    assert change_notice(entry(other_limit.source), after) is None
    assert change_notice(entry("not json"), after) is None


def test_the_documents_digest_counts_and_follows_ids_content_and_metadata() -> None:
    from hoprag import Document
    from hoprag.cli.load_source import documents_digest

    docs = [Document("a", "one", {"k": 1}), Document("b", "two")]
    count, digest = documents_digest(docs)
    assert count == 2 and digest.startswith("sha256:")
    assert documents_digest(list(docs)) == (2, digest)
    for other in (
        [Document("a", "one", {"k": 2}), Document("b", "two")],
        [Document("a", "one", {"k": 1}), Document("c", "two")],
        [Document("b", "two"), Document("a", "one", {"k": 1})],
    ):
        assert documents_digest(other)[1] != digest


def test_a_long_read_of_keys_shows_progress_and_a_short_one_stays_quiet(
    capfd: pytest.CaptureFixture[str],
) -> None:
    from hoprag.cli.stats import SHOW_COUNT_AFTER, shown_pages

    short = [[1] * 10, [2] * 10]
    assert list(shown_pages(short, "count ks.t")) == short
    assert capfd.readouterr().err == ""
    page = [0] * (SHOW_COUNT_AFTER // 2)
    assert sum(len(p) for p in shown_pages([page, page, page], "count ks.t")) == len(page) * 3
    lines = capfd.readouterr().err.splitlines()
    assert lines and all(line.startswith("count ks.t ") for line in lines)
    assert lines[-1].startswith(f"count ks.t {len(page) * 3} keys ")
