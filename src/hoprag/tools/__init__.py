"""Graph search as a tool for LLM agents: `SearchTool` (structured arguments, entity
resolution with follow-up questions, a graph scope, filters, ranking by topic) and the ready
`film_search_tool(store)`.

    from hoprag.tools import Choice, Entity, Limit, Range, SearchTool, Topic
    tool = SearchTool("film_search", "Search films.", store, [
        Topic("What the films are about.", examples=["western"]),
        Entity("actor", ["cast"], "A person in the cast."),
        Choice("reviews", {"positive": {"tomato_meter": {"$gte": 60}}}, "Critics' reviews."),
        Range("year_from", "year", "gte", "Released in this year or later."),
        Limit(),
    ])
    answer = await tool.arun(topic="western", actor="fonda")   # or tool.run(...)
    answer.follow_up.question   # "Which did you mean by 'fonda' for actor: Jane Fonda ..."

`tool.args_schema` (pydantic), `tool.openai_schema()`, `tool.as_langchain()`; the answer's
`nodes`, `text`, `statements`, `stats`, `follow_up`, `to_dict()` (`hoprag.tools.answer`)."""

from hoprag.tools.answer import FollowUp, Statement, ToolAnswer
from hoprag.tools.films import FILM_GENRES, film_parameters, film_search_tool
from hoprag.tools.schema import Choice, Entity, Limit, Parameter, Range, Topic, Value
from hoprag.tools.tool import SearchTool

__all__ = [
    "FILM_GENRES",
    "Choice",
    "Entity",
    "FollowUp",
    "Limit",
    "Parameter",
    "Range",
    "SearchTool",
    "Statement",
    "ToolAnswer",
    "Topic",
    "Value",
    "film_parameters",
    "film_search_tool",
]
