"""The README's multi-hop recipe runs as shown, on text files in a `notes` directory, with
MiniLM: the question names a singer, her page names her label, and the label's page (unlike
the question) comes back through the title-mention edge."""

from __future__ import annotations

import ast
import asyncio
import contextlib
import io
import os
import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


NOTES = {
    "Ada Wren": "Ada Wren is a folk singer from Leeds. Her first album came out on Gull Records.",
    "Gull Records": "An independent company in York, started in 1971 by the printer Tom Hale; "
    "it presses vinyl.",
    "Leeds": "A city in West Yorkshire with a large university.",
    "Harbour Sounds": "Harbour Sounds is a label that signed many folk singers in the sixties.",
    "Blue Finch": "Blue Finch is a label founded by two brothers; it signed jazz bands.",
    "Mara Stone": "Mara Stone is a folk singer who was signed by Harbour Sounds.",
    "Otters": "Otters are semi-aquatic mammals that eat fish.",
    "Folk music": "Folk music is music of the people, often sung by singers in pubs.",
    "Vinyl": "A vinyl record is an analog sound storage medium.",
    "York": "York is a city in North Yorkshire with a minster.",
}


def _recipe_block() -> str:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    (block,) = [b for b in blocks if "link_phrases(docs)" in b]
    return block


def test_the_readme_recipe_runs_on_text_files_and_reaches_the_bridge(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    for title, text in NOTES.items():
        (notes / f"{title}.txt").write_text(text)
    code = compile(_recipe_block(), "README.md", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        with contextlib.redirect_stdout(out):
            result = eval(code, {})  # the README's own code
            if result is not None:
                asyncio.run(result)
    finally:
        os.chdir(cwd)
    lines = out.getvalue().splitlines()
    assert len(lines) == 5
    assert lines[0] == "Ada Wren 0 ('Ada Wren',)"
    # The label's page is neither a vector nor a BM25 start (it shares no word with the
    # question and other labels are closer): it is reached from her page, and kept near the top.
    assert "Gull Records 1 ('Ada Wren', 'Gull Records')" in lines[:3]
