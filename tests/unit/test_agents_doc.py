"""docs/agents.md's "The schema an LLM sees" tells the truth: its table lists the films tool's
parameters in the schema's order with their enums and descriptions, and its command prints
the schema."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from hoprag.embeddings import HashEmbedding
from hoprag.stores import MemoryStore
from hoprag.tools import film_search_tool

DOC = Path(__file__).resolve().parents[2] / "docs" / "agents.md"


def _section() -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index("## The schema an LLM sees")
    return text[start : text.index("\n## ", start + 1)]


def _schema() -> dict[str, Any]:
    out: dict[str, Any] = film_search_tool(MemoryStore(HashEmbedding(8))).openai_schema()
    return out


def test_the_documented_parameters_are_the_schemas_with_their_enums_and_descriptions() -> None:
    props = _schema()["function"]["parameters"]["properties"]
    rows = [line.split(" | ") for line in _section().splitlines() if line.startswith("| `")]
    assert [r[0].strip("| `") for r in rows] == list(props)
    for (_, kind, description, _), (name, prop) in zip(rows, props.items(), strict=True):
        assert description == prop["description"], name
        options = [a for a in prop.get("anyOf", [prop]) if a.get("type") != "null"]
        enum = options[0].get("enum")
        assert re.findall(r"`([^`]+)`", kind) == (enum or []), name


def test_the_documented_command_prints_the_schema() -> None:
    section = _section()
    command = section[section.index("python -c '") + len("python -c '") :]
    command = command[: command.index("'\n```")]
    printed = subprocess.run(
        [sys.executable, "-c", command], capture_output=True, text=True, check=True, timeout=120
    )
    assert json.loads(printed.stdout) == _schema()
