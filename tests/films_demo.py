"""Running the films demo (`scripts/demo --films`) in tests: against the test node, with hash
vectors, as a user runs it."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TABLE = "films"
EMBEDDING = "hash:32"


@dataclass(frozen=True)
class FilmsDemoRun:
    """One run of the films demo: its keyspace, what it printed and its JSON figures."""

    keyspace: str
    stdout: str
    json_path: Path


def run_films_demo(command: list[str], contact: str, keyspace: str, out: Path) -> FilmsDemoRun:
    """Run the films demo `command` (the shell script or scripts/demo.py) on `keyspace`.films
    with 32-d hash vectors, writing its figures to `out`; fails with its output if it fails."""
    env = {**os.environ, "HOPRAG_CASSANDRA": contact, "HOPRAG_SETUP_MINILM": "0",
           "HF_HUB_OFFLINE": "1"}  # fmt: skip
    r = subprocess.run(
        [*command, "--films", "--embedding", EMBEDDING, "--table", TABLE, "--keyspace",
         keyspace, "--json", str(out)],
        cwd=REPO, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL,
        timeout=1500, check=False,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    return FilmsDemoRun(keyspace, r.stdout, out)
