"""hoprag: graph traversal retrieval over Apache Cassandra 5.0 and Astra DB.

A query is embedded, a vector search finds start documents, and the traversal follows edges
defined by the documents' metadata hop by hop, streaming each admitted node with its depth,
score and path."""

from hoprag.documents import Document, Node, Path
from hoprag.edges import Edge, Edges, IdEdge, MetadataEdge

__version__ = "0.1.0"

__all__ = ["Document", "Edge", "Edges", "IdEdge", "MetadataEdge", "Node", "Path", "__version__"]
