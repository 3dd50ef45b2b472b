"""The traversal engine: a run's hops as rounds of store reads, the frontier that credits each
new document to one followed edge, the look-ahead that saves rounds over slow links, and the
coordinator that joins a strategy and a store and streams what the strategy admits.

Its public face is `atraverse`, `astream` and `traverse` (with `TraversalStream`); the rest
(`engine.rounds`, `engine.frontier`, `engine.speculation`, `engine.traversal`) is what other
readers of the store build on (`hoprag.search`, the scopes). The engine imports no scope
module: a scope, like a vector search, explicit ids or a lexical search, is a start source
(`engine.rounds.StartSource`)."""

from hoprag.engine.traversal import TraversalStream, astream, atraverse, traverse

__all__ = ["TraversalStream", "astream", "atraverse", "traverse"]
