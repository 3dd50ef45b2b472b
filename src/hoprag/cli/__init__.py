"""The `hoprag` command: load datasets into Cassandra, query them by graph traversal, show stats.

    hoprag load foldoc [--limit N] [--table T]       # or films, wordnet, jsonl --path FILE
    hoprag query "text" --table T --edges keywords:keywords,links:$id [--strategy mmr ...]
    hoprag stats [--table T]
    hoprag fields declare --table T year=number released=date cast=entity
    hoprag fields list --table T
    hoprag ask --table films --actor fonda --topic western --reviews positive [--json]
    hoprag mcp --table films                          # or --table T --tool module:factory

`ask` runs the films search tool (`hoprag.tools.film_search_tool`) on a table loaded by `hoprag
load films`; when a name is ambiguous or unknown it prints the follow-up question (the
candidates) and exits with status 3. `mcp` serves that tool (or the SearchTool a user's
`factory(store)` returns) to MCP clients over stdio (`hoprag.tools.mcp`): stdout is the
protocol, everything else goes to stderr.

Contact points come from HOPRAG_CASSANDRA (default 127.0.0.1). Every load records itself in
the keyspace's `hoprag_catalog` table (`hoprag.stores.cassandra.catalog`: source, embedding,
documents written), which is how an interrupted load resumes where it stopped and how `query`
knows which embedding a table uses. Every argument is checked before anything connects. Errors
are printed as one line on stderr with exit status 2 (bad input) or 1 (failure). Ids, contents
and values are printed terminal-safe (`hoprag.termsafe`): a control character shows as `\x1b`,
never raw.

One module per command group (`load`, `query`, `stats`, `fields`, `ask`, `mcp`, `link`, `eval`),
over `common` (errors, embeddings, progress, the session) and `options` (edges, filters,
strategies); `parser` builds the parser, `main` runs a command. The names other code uses are
exported here."""

from hoprag.cli.common import (
    DEFAULT_KEYSPACE,
    LOAD_BATCH,
    CliError,
    Progress,
    embedding_dimension,
    make_embedding,
    open_session,
)
from hoprag.cli.main import error_text, main
from hoprag.cli.options import make_strategy, parse_edges_arg, parse_filter_arg
from hoprag.cli.parser import build_parser
from hoprag.cli.query import format_path, node_row, print_table

__all__ = [
    "DEFAULT_KEYSPACE",
    "LOAD_BATCH",
    "CliError",
    "Progress",
    "build_parser",
    "embedding_dimension",
    "error_text",
    "format_path",
    "main",
    "make_embedding",
    "make_strategy",
    "node_row",
    "open_session",
    "parse_edges_arg",
    "parse_filter_arg",
    "print_table",
]
