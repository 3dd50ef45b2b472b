"""`hoprag.tools`: the film search tool on a MemoryStore of all 17,472 films (HashEmbedding):
entity resolution and follow-ups, malformed arguments, results checked by SQL over movies.db,
statements that carry values only as parameters, the JSON schema, and the LangChain tool."""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema
import pytest
from langchain_core.tools import StructuredTool

from films_sql import film_genres, films_sharing_a_director_with, films_where
from hoprag.datasets.films import load_films, movies_db_path
from hoprag.documents import Document
from hoprag.embeddings.hash import HashEmbedding
from hoprag.errors import InvalidInputError
from hoprag.stores.memory import MemoryStore
from hoprag.tools import (
    FILM_GENRES,
    Choice,
    Entity,
    Range,
    SearchTool,
    Topic,
    Value,
    film_search_tool,
)
from hoprag.tools.mcp import call_result
from hoprag.tools.tool import merge_filters


@pytest.fixture(scope="module")
def store() -> MemoryStore:
    s = MemoryStore(HashEmbedding(64))
    s.add(load_films())
    return s


@pytest.fixture(scope="module")
def tool(store: MemoryStore) -> SearchTool:
    return film_search_tool(store)


DB = movies_db_path()


def _search_statement(answer: Any) -> dict[str, Any]:
    (search,) = [s for s in answer.statements if s.operation == "search"]
    params: dict[str, Any] = search.parameters
    return params


# --- resolution and follow-ups ----------------------------------------------------------------


async def test_an_exact_name_is_taken_without_asking(tool: SearchTool) -> None:
    answer = await tool.arun(topic="western", actor="henry FONDA")
    assert not answer.is_follow_up and answer.follow_up is None
    assert answer.resolved["actor"].value == "Henry Fonda"
    assert answer.resolved["actor"].score == 1.0
    assert _search_statement(answer)["filter"] == {"cast": "Henry Fonda"}
    assert len(answer.nodes) == 10
    assert all("Henry Fonda" in n.metadata["cast"] for n in answer.nodes)


async def test_an_ambiguous_name_asks_back_with_the_candidates(
    tool: SearchTool, store: MemoryStore
) -> None:
    answer = await tool.arun(topic="western", actor="fonda", reviews="positive")
    assert answer.is_follow_up
    follow = answer.follow_up
    assert follow is not None and follow.parameter == "actor" and follow.text == "fonda"
    assert follow.candidates == await store.aresolve("fonda", ["cast"], limit=10)
    names = [c.value for c in follow.candidates]
    assert {"Jane Fonda", "Henry Fonda", "Peter Fonda", "Bridget Fonda"} <= set(names)
    for c in follow.candidates:
        assert f"{c.value} (cast, {c.documents} films)" in follow.question
    assert follow.question.startswith("Which did you mean by 'fonda' for actor: Jane Fonda")
    # No search ran: nodes empty, no stats, the text is the question.
    assert answer.nodes == [] and answer.stats is None and answer.text == follow.question
    assert [s.operation for s in answer.statements] == ["resolve"]


async def test_an_unknown_name_asks_back_saying_nothing_matched(tool: SearchTool) -> None:
    answer = await tool.arun(topic="western", director="Zzyzx Qwerty")
    follow = answer.follow_up
    assert follow is not None and follow.parameter == "director"
    assert follow.candidates == [] and follow.not_found
    assert follow.question.startswith("Nothing matched 'Zzyzx Qwerty' for director")
    assert answer.nodes == []


async def test_a_single_partial_candidate_is_taken(tool: SearchTool, store: MemoryStore) -> None:
    cands = await store.aresolve("almodovar", ["director"], limit=10)
    assert [c.value for c in cands] == ["Pedro Almodóvar"] and cands[0].score < 1.0
    answer = await tool.arun(director="almodovar")
    assert answer.resolved["director"] == cands[0]
    assert {n.id for n in answer.nodes} <= set(films_where(DB, director="Pedro Almodóvar"))


async def test_the_first_entity_needing_a_follow_up_is_asked_and_every_one_is_resolved(
    tool: SearchTool,
) -> None:
    answer = await tool.arun(actor="fonda", director="Nobody Atall Xq")
    assert answer.follow_up is not None and answer.follow_up.parameter == "actor"
    assert [s.parameters["parameter"] for s in answer.statements] == ["actor", "director"]


@pytest.mark.parametrize("fields", [["cast", "director"], ["director", "cast"]])
async def test_exact_matches_in_several_fields_take_the_first_declared_field(
    store: MemoryStore, fields: list[str]
) -> None:
    person = SearchTool(
        "people", "Films.", store, [Topic("Topic."), Entity("person", fields, "P.")]
    )
    cands = await store.aresolve("peter fonda", fields, limit=10)
    assert {(c.field, c.score) for c in cands} == {("cast", 1.0), ("director", 1.0)}
    answer = await person.arun(topic="road", person="peter fonda")
    assert answer.resolved["person"].field == fields[0]
    assert _search_statement(answer)["filter"] == {fields[0]: "Peter Fonda"}
    assert all("Peter Fonda" in n.metadata[fields[0]] for n in answer.nodes)


# --- malformed arguments ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "parameter", "shown"),
    [
        ({"year_from": "1990"}, "year_from", "an integer"),
        ({"year_from": True}, "year_from", "an integer"),
        ({"reviews": "good"}, "reviews", "'positive', 'negative'"),
        ({"genre": "western"}, "genre", "'Western'"),
        ({"limit": 51}, "limit", "1..50"),
        ({"topic": 5}, "topic", "a text"),
        ({"actress": "fonda"}, "actress", "the parameters are: topic, actor"),
    ],
)
async def test_malformed_arguments_name_the_parameter_value_and_what_is_allowed(
    tool: SearchTool, args: dict[str, Any], parameter: str, shown: str
) -> None:
    with pytest.raises(InvalidInputError) as info:
        await tool.arun(**({"topic": "western"} | args))
    exc = info.value
    assert exc.argument == parameter
    assert parameter in str(exc) and repr(next(iter(args.values()))) in str(exc)
    assert shown in str(exc)


async def test_a_null_limit_is_the_default_as_for_every_optional_parameter(
    tool: SearchTool,
) -> None:
    """Models send null for optional parameters they do not set: a null limit asks for the
    default (10), the same answer as leaving it out, and the schema says null is allowed."""
    given = await tool.arun(topic="war", limit=None)
    omitted = await tool.arun(topic="war")
    assert [n.id for n in given.nodes] == [n.id for n in omitted.nodes]
    assert len(given.nodes) == 10 and given.arguments["limit"] == 10
    schema = tool.args_schema.model_json_schema()["properties"]["limit"]
    assert {"type": "null"} in schema["anyOf"] and schema["default"] == 10


async def test_no_topic_and_nothing_else_is_refused_naming_topic(tool: SearchTool) -> None:
    with pytest.raises(InvalidInputError) as info:
        await tool.arun(limit=5)
    assert info.value.argument == "topic" and "actor, director" in str(info.value)


async def test_a_year_range_with_nothing_between_is_refused(tool: SearchTool) -> None:
    with pytest.raises(InvalidInputError) as info:
        await tool.arun(topic="war", year_from=2000, year_to=1990)
    assert info.value.argument == "year_from" and "year_to" in str(info.value)


async def test_a_name_without_letters_is_refused_naming_the_parameter(tool: SearchTool) -> None:
    with pytest.raises(InvalidInputError) as info:
        await tool.arun(actor="!!!")
    assert info.value.argument == "actor" and "'!!!'" in str(info.value)


async def test_two_scope_entities_in_one_call_are_refused(store: MemoryStore) -> None:
    two = SearchTool(
        "two_scopes",
        "Films.",
        store,
        [
            Topic("Topic."),
            Entity("with_actor", ["cast"], "An actor.", scope_edges=[("director", "director")]),
            Entity("with_writer", ["writer"], "A writer.", scope_edges=[("director", "director")]),
        ],
    )
    with pytest.raises(InvalidInputError) as info:
        await two.arun(topic="war", with_actor="Meryl Streep", with_writer="Neil Simon")
    assert info.value.argument == "with_writer" and "one scope" in str(info.value)


def test_bad_declarations_are_refused_when_the_tool_is_made(store: MemoryStore) -> None:
    with pytest.raises(InvalidInputError, match="distinct names"):
        SearchTool("t", "d", store, [Topic("a"), Value("topic", "x", "b")])
    with pytest.raises(InvalidInputError, match="Range 'year_from' bound"):
        Range("year_from", "year", "gt", "d")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match=r"examples\[0\]"):
        SearchTool("t", "d", store, [Topic("a")], examples=[{"topik": "x"}])


# --- results by SQL ---------------------------------------------------------------------------


async def test_westerns_with_henry_fonda_with_positive_reviews_are_the_sql_answer(
    tool: SearchTool,
) -> None:
    sql = films_where(DB, cast="Henry Fonda", genre="Western", meter_at_least=60)
    assert len(sql) >= 5
    args = {"topic": "western", "actor": "Henry Fonda", "genre": "Western", "reviews": "positive"}
    few = await tool.arun(**args, limit=3)
    assert len(few.nodes) == 3 and {n.id for n in few.nodes} <= set(sql)
    every = await tool.arun(**args, limit=50)
    assert {n.id for n in every.nodes} == set(sql)
    assert _search_statement(every)["filter"] == {
        "cast": "Henry Fonda",
        "genre": "Western",
        "tomato_meter": {"$gte": 60},
    }


async def test_negative_reviews_and_a_country_are_the_sql_answer(tool: SearchTool) -> None:
    sql = films_where(DB, country="France", genre="Western", meter_at_most=40)
    answer = await tool.arun(topic="western", country="France", genre="Western",
                             reviews="negative", limit=50)  # fmt: skip
    assert {n.id for n in answer.nodes} == set(sql)


async def test_worked_with_actor_searches_the_films_of_her_directors_by_sql(
    tool: SearchTool,
) -> None:
    anchors, shared = films_sharing_a_director_with(DB, "Meryl Streep")
    war = set(films_where(DB, genre="War"))
    answer = await tool.arun(topic="war", worked_with_actor="meryl streep", genre="War", limit=50)
    assert {n.id for n in answer.nodes} == (anchors | shared) & war
    assert answer.stats is not None and answer.stats.scope_size == len(anchors | shared)
    assert _search_statement(answer)["scope"] == {
        "start": {"cast": "Meryl Streep"},
        "edges": [["director", "director"]],
        "max_depth": 1,
    }
    top = await tool.arun(topic="war", worked_with_actor="meryl streep", genre="War", limit=5)
    assert [n.id for n in top.nodes] == [n.id for n in answer.nodes[:5]]


async def test_without_a_topic_the_newest_films_come_first(tool: SearchTool) -> None:
    sql = films_where(DB, director="Pedro Almodóvar", year_from=1990, year_to=2005)
    answer = await tool.arun(director="Pedro Almodovar", year_from=1990, year_to=2005)
    assert {n.id for n in answer.nodes} == set(sql) and len(sql) > 3
    years = [n.metadata["year"] for n in answer.nodes]
    assert years == sorted(years, reverse=True)
    search = _search_statement(answer)
    assert search["order_by"] == "-year" and search["query"] is None
    assert search["filter"] == {"director": "Pedro Almodóvar", "year": {"$gte": 1990, "$lte": 2005}}


async def test_the_text_numbers_each_result_with_title_year_and_content(tool: SearchTool) -> None:
    answer = await tool.arun(topic="western", actor="Henry Fonda", limit=3)
    blocks = answer.text.split("\n\n")
    assert len(blocks) == 3
    for i, (block, node) in enumerate(zip(blocks, answer.nodes, strict=True), 1):
        head, content = block.split("\n", 1)
        meta = node.metadata
        assert head == f"[{i}] {meta['title']} ({meta['year']}), id: {node.id}"
        assert content == node.content


def test_the_sync_run_gives_the_async_answer(tool: SearchTool) -> None:
    answer = tool.run(topic="war", actor="Henry Fonda", limit=5)
    assert len(answer.nodes) == 5 and all("Henry Fonda" in n.metadata["cast"] for n in answer.nodes)


def test_the_film_genres_are_those_of_movies_db() -> None:
    assert set(FILM_GENRES) == film_genres(DB) and len(FILM_GENRES) == len(set(FILM_GENRES))


# --- statements -------------------------------------------------------------------------------


async def test_statements_carry_user_values_only_as_parameters(tool: SearchTool) -> None:
    topic = "western'; DROP TABLE films; --"
    actor = "Maureen O'Hara"
    answer = await tool.arun(topic=topic, actor=actor, country='United States"; --')
    assert answer.follow_up is None and answer.nodes == []  # no such country: nothing found
    resolve, search = answer.statements
    assert resolve.operation == "resolve" and resolve.parameters["text"] == actor
    assert search.parameters["query"] == topic
    assert search.parameters["filter"] == {"cast": actor, "country": 'United States"; --'}
    for s in answer.statements:
        for value in (topic, actor, "O'Hara", "DROP", '"; --'):
            assert value not in s.text
    found = await tool.arun(topic=topic, actor=actor, limit=50)
    assert {n.id for n in found.nodes} == set(films_where(DB, cast=actor))


async def test_the_answer_is_json_able(tool: SearchTool) -> None:
    answer = await tool.arun(topic="western", actor="Henry Fonda", limit=2)
    doc = json.loads(json.dumps(answer.to_dict(), allow_nan=False))
    assert [r["id"] for r in doc["results"]] == [n.id for n in answer.nodes]
    assert doc["resolved"]["actor"]["value"] == "Henry Fonda" and doc["follow_up"] is None
    assert doc["results"][0]["year"] == answer.nodes[0].metadata["year"]
    assert doc["stats"]["plan"] == "search" and doc["stats"]["explain"].startswith("plan: search")
    follow = (await tool.arun(actor="fonda")).to_dict()
    json.dumps(follow, allow_nan=False)
    assert follow["follow_up"]["candidates"][0] == {
        "field": "cast",
        "value": "Jane Fonda",
        "documents": 40,
        "score": 0.5,
    }


def test_merge_filters_ands_parts_and_falls_back_to_and_on_a_clash() -> None:
    assert merge_filters([]) is None
    assert merge_filters([{"year": {"$gte": 1}}, {"year": {"$lte": 2}}, {"cast": "A"}]) == {
        "year": {"$gte": 1, "$lte": 2},
        "cast": "A",
    }
    clash = [{"genre": "War"}, {"genre": "Drama"}]
    assert merge_filters(clash) == {"$and": clash}


# --- schema -----------------------------------------------------------------------------------


def test_the_openai_schema_is_valid_json_schema_and_round_trips(tool: SearchTool) -> None:
    decl = tool.openai_schema()
    assert decl["type"] == "function"
    fn = decl["function"]
    assert fn["name"] == "film_search" and fn["description"] == tool.description
    schema = fn["parameters"]
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    assert schema["additionalProperties"] is False
    props = schema["properties"]
    assert set(props) == {p.name for p in tool.parameters}
    assert all(props[name].get("description") for name in props)
    assert props["reviews"]["anyOf"][0]["enum"] == ["positive", "negative"]
    assert props["genre"]["anyOf"][0]["enum"] == list(FILM_GENRES)
    assert "western" in props["topic"]["examples"]
    assert schema["examples"]
    for example in schema["examples"]:
        validator.validate(example)
        tool.args_schema.model_validate(example)
    for name, prop in props.items():
        for example in prop.get("examples", []):
            validator.validate({name: example})
            tool.args_schema.model_validate({name: example})
    # The JSON schema refuses what pydantic refuses.
    for bad in ({"reviews": "good"}, {"actress": "x"}, {"limit": 51}, {"year_from": "1990"}):
        assert not validator.is_valid(bad)
        with pytest.raises(InvalidInputError):
            tool.check_arguments(bad)


# --- LangChain --------------------------------------------------------------------------------


async def test_the_langchain_tool_runs_sync_and_async_with_the_same_text(tool: SearchTool) -> None:
    lc = tool.as_langchain()
    assert isinstance(lc, StructuredTool) and lc.name == "film_search"
    assert lc.args_schema is tool.args_schema
    args = {"topic": "western", "actor": "Henry Fonda", "limit": 3}
    expected = (await tool.arun(**args)).text
    assert await lc.ainvoke(args) == expected
    assert lc.invoke(args) == expected  # the sync path, from inside a running loop
    assert (await lc.ainvoke({"actor": "fonda"})).startswith("Which did you mean by 'fonda'")


def test_the_langchain_tool_shows_a_chat_model_the_tools_examples_and_closed_parameters(
    tool: SearchTool,
) -> None:
    """What `bind_tools` sends a chat model (`convert_to_openai_tool`) is the tool's own
    schema: LangChain rebuilt the tool-call schema from the fields alone, so the model never
    saw the topic's and entities' examples, the whole example calls, or that no other
    parameter is accepted (`additionalProperties: false`), which `openai_schema()` and MCP
    show."""
    from langchain_core.utils.function_calling import convert_to_openai_tool

    sent = convert_to_openai_tool(tool.as_langchain())["function"]
    declared = tool.openai_schema()["function"]
    assert (sent["name"], sent["description"]) == (declared["name"], declared["description"])
    params, schema = sent["parameters"], declared["parameters"]
    assert params["additionalProperties"] is False
    assert params["examples"] == schema["examples"]
    for name, prop in schema["properties"].items():
        assert params["properties"][name].get("examples") == prop.get("examples"), name
        assert params["properties"][name]["description"] == prop["description"], name
    assert params.get("required", []) == schema.get("required", [])


@pytest.mark.parametrize(
    ("args", "named"),
    [
        ({"topic": "war", "reviews": "good"}, "reviews"),
        ({"topic": "war", "actress": "fonda"}, "actress"),
        ({"topic": "war", "year_from": "1990"}, "year_from"),
        ({"limit": 3}, "topic"),  # refused while running: a ToolException
        ({"topic": "war", "year_from": 2000, "year_to": 1990}, "year_from"),
    ],
)
async def test_the_langchain_tool_answers_malformed_arguments_with_a_message(
    tool: SearchTool, args: dict[str, Any], named: str
) -> None:
    lc = tool.as_langchain()
    for out in (await lc.ainvoke(args), lc.invoke(args)):
        assert isinstance(out, str) and out.startswith("Invalid arguments: ")
        assert named in out and "Traceback" not in out


# --- hoprag ask: checked before connecting ----------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "shown"),
    [
        (["--reviews", "good"], "--reviews: reviews must be one of 'positive', 'negative'"),
        (["--worked-with-actor", "x" * 201], "--worked-with-actor: worked_with_actor must be"),
        (["--limit", "0"], "--limit: limit must be an integer in 1..50, got 0"),
        (["--json", "--explain"], "--explain applies to the text output"),
        (["--keyspace", "bad-name"], "keyspace"),
    ],
)
def test_ask_refuses_malformed_flags_with_exit_2_before_connecting(
    flags: list[str], shown: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from hoprag.cli import main

    # Port 1 answers nothing: a command that tried to connect would fail with exit 1.
    assert main(["ask", "--topic", "war", *flags, "--contact-points", "127.0.0.1:1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hoprag: error: ") and shown in err and err.count("\n") == 1


async def test_a_name_with_the_words_of_two_actors_in_another_order_asks_which(
    tool: SearchTool, store: MemoryStore
) -> None:
    """'Keith, David' holds the words of Keith David and of David Keith, two actors of the
    films, and is neither name: the tool asks instead of settling on one (issue #28, 1)."""
    cands = await store.aresolve("Keith, David", ["cast"], limit=10)
    assert {"Keith David", "David Keith"} <= {c.value for c in cands}
    assert all(c.score == 1.0 and not c.exact for c in cands[:2])
    answer = await tool.arun(topic="war", actor="Keith, David")
    assert answer.is_follow_up and answer.follow_up is not None
    assert answer.follow_up.parameter == "actor"
    assert [s.operation for s in answer.statements] == ["resolve"]
    settled = await tool.arun(topic="war", actor="keith DAVID")
    assert settled.resolved["actor"].value == "Keith David" and settled.resolved["actor"].exact


async def test_the_langchain_tool_takes_a_plain_string_as_its_topic(tool: SearchTool) -> None:
    """Agents send `invoke("western")`; it was a TypeError (issue #28, 7)."""
    lc = tool.as_langchain()
    expected = (await tool.arun(topic="western")).text
    assert await lc.ainvoke("western") == expected
    assert lc.invoke("western") == expected


async def test_a_range_beyond_what_a_filter_holds_is_refused_naming_the_parameter(
    tool: SearchTool,
) -> None:
    """Issue #28, 10: year_from=2**63 passed the argument check and failed in the filter,
    whose message named filter['year']['$gte'] instead of year_from."""
    with pytest.raises(InvalidInputError, match=r"^year_from must be an integer") as info:
        await tool.arun(topic="war", year_from=2**63)
    assert info.value.argument == "year_from" and "filter[" not in str(info.value)
    result = await call_result(tool, {"topic": "war", "year_to": -(2**63) - 1})
    assert result.is_error and result.content[0].text.startswith("Invalid arguments: year_to")


async def test_a_listing_of_too_many_names_the_tools_own_parameters(tool: SearchTool) -> None:
    """Issue #28, 13: the message advised order_by, Scope and max_size, which an agent
    calling the tool cannot set."""
    with pytest.raises(InvalidInputError) as info:
        await tool.arun(country="United States")
    message = str(info.value)
    assert "more than 10,000 films" in message and "give a topic" in message
    assert "genre" in message and "year_from" in message
    for internal in ("order_by", "Scope", "max_size", "filter"):
        assert internal not in message
    assert info.value.argument == "country"


async def test_a_scope_too_large_names_the_tools_own_parameters() -> None:
    store = MemoryStore(HashEmbedding(8))
    people = [Document("p", "a person", {"cast": ["Ann Lee"], "director": "Bo"})]
    many = [Document(f"d{i}", f"film {i}", {"director": "Bo"}) for i in range(10_001)]
    store.add(people + many)
    scoped = SearchTool(
        "films",
        "Films.",
        store,
        [
            Topic("Topic."),
            Entity("with_actor", ["cast"], "An actor.", scope_edges=[("director", "director")]),
            Choice("kind", {"any": {"director": "Bo"}}, "A kind."),
        ],
    )
    with pytest.raises(InvalidInputError) as info:
        await scoped.arun(topic="war", with_actor="Ann Lee")
    message = str(info.value)
    assert "the search through with_actor would reach more than 10,000 documents" in message
    assert "add one of kind" in message
    assert "max_depth" not in message and "max_size" not in message


async def test_a_listing_shows_no_score_and_a_dotted_title_field_is_read(
    store: MemoryStore,
) -> None:
    """Issue #28, 18: a listing's picture showed "nan" as every score, and a dotted
    title_field was accepted but the answer showed the id."""
    nested = MemoryStore(HashEmbedding(8))
    nested.add(
        [
            Document(f"f{i}", f"film {i}", {"info": {"name": f"Film {i}"}, "year": 2000 + i})
            for i in range(3)
        ]
    )
    tool = SearchTool(
        "films",
        "Films.",
        nested,
        [Topic("Topic."), Range("year_from", "year", "gte", "From.")],
        title_field="info.name",
    )
    answer = await tool.arun(year_from=2000)  # no topic: the newest first, unscored
    assert answer.text.startswith("[1] Film 2 (2002), id: f2")
    assert [r["title"] for r in answer.to_dict()["results"]] == ["Film 2", "Film 1", "Film 0"]
    page = answer.html(title="listing")
    assert re.search(r"\bnan\b", page, re.IGNORECASE) is None
    assert ">\u2013</text>" in page
