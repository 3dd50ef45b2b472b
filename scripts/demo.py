"""hoprag demo (foundation stage): create the schema on a live Cassandra 5.0, insert a few
documents and run ANN queries, plain and with a metadata-token filter.

Run through `scripts/demo`, which installs what is needed and starts Cassandra. The embedding
here is a bag of hashed words, enough to show lexical similarity without a model."""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import time

import numpy as np

from hoprag.stores.cassandra.schema import apply_schema, replication_map
from hoprag.stores.cassandra.session import connect
from hoprag.stores.cassandra.tokens import metadata_tokens, token

DIM = 256
ANIMALS = [
    ("aardvark", "nocturnal burrowing mammal that eats ants with a long sticky tongue",
     {"type": "mammal", "habitat": "savanna", "keywords": ["nocturnal", "burrowing", "ants"]}),
    ("pangolin", "scaly mammal that rolls into a ball and eats ants and termites at night",
     {"type": "mammal", "habitat": "forest", "keywords": ["nocturnal", "ants", "scales"]}),
    ("armadillo", "armoured burrowing mammal that digs for insects",
     {"type": "mammal", "habitat": "grassland", "keywords": ["burrowing", "insects", "armour"]}),
    ("owl", "nocturnal bird of prey with silent flight",
     {"type": "bird", "habitat": "forest", "keywords": ["nocturnal", "predator"]}),
    ("eagle", "large bird of prey with sharp eyesight that hunts by day",
     {"type": "bird", "habitat": "mountains", "keywords": ["predator", "flight"]}),
    ("anteater", "mammal with a long snout and tongue that eats ants and termites",
     {"type": "mammal", "habitat": "savanna", "keywords": ["ants", "tongue"]}),
    ("mole", "small burrowing mammal that lives underground and eats worms",
     {"type": "mammal", "habitat": "meadow", "keywords": ["burrowing", "underground"]}),
    ("gecko", "small lizard that climbs walls and hunts insects at night",
     {"type": "reptile", "habitat": "tropical", "keywords": ["nocturnal", "insects", "climbing"]}),
    ("bat", "flying nocturnal mammal that hunts insects by echolocation",
     {"type": "mammal", "habitat": "caves", "keywords": ["nocturnal", "flight", "insects"]}),
    ("termite", "social insect that builds large mounds and eats wood",
     {"type": "insect", "habitat": "savanna", "keywords": ["social", "mounds"]}),
]  # fmt: skip


def embed(text: str) -> list[float]:
    """Bag of words hashed into DIM buckets, L2-normalised."""
    v = np.zeros(DIM, dtype=np.float32)
    for w in re.findall(r"[a-z]+", text.lower()):
        v[int.from_bytes(hashlib.blake2b(w.encode(), digest_size=4).digest(), "big") % DIM] += 1
    n = float(np.linalg.norm(v))
    return (v / n if n else v).tolist()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--keyspace", default="hoprag_demo")
    ap.add_argument("--query", default="nocturnal animal that eats ants")
    args = ap.parse_args()

    t0 = time.perf_counter()
    session = connect()
    ks, table = args.keyspace, "animals"
    apply_schema(session, ks, table, DIM, replication=replication_map(1))
    insert = session.prepare(
        f"INSERT INTO {ks}.{table} (id, content, embedding, metadata, tokens) VALUES (?,?,?,?,?)"
    )
    for doc_id, text, md in ANIMALS:
        session.execute(insert, (doc_id, text, embed(text), json.dumps(md), metadata_tokens(md)))
    took = time.perf_counter() - t0
    print(f"schema ready and {len(ANIMALS)} documents in {ks}.{table} ({took:.1f}s)")

    ann = session.prepare(
        f"SELECT id, content, similarity_cosine(embedding, ?) AS s FROM {ks}.{table} "
        "ORDER BY embedding ANN OF ? LIMIT 4"
    )
    ann_filtered = session.prepare(
        f"SELECT id, content, similarity_cosine(embedding, ?) AS s FROM {ks}.{table} "
        "WHERE tokens CONTAINS ? ORDER BY embedding ANN OF ? LIMIT 4"
    )
    q = embed(args.query)
    print(f"\nANN search: {args.query!r}")
    for r in session.execute(ann, (q, q)):
        print(f"  {r.id:<10} cos={2 * r.s - 1:.3f}  {r.content}")
    tok = token("keywords", "burrowing")
    print(f"\nANN search with the metadata filter keywords contains 'burrowing' ({tok})")
    for r in session.execute(ann_filtered, (q, tok, q)):
        print(f"  {r.id:<10} cos={2 * r.s - 1:.3f}  {r.content}")
    session.cluster.shutdown()


if __name__ == "__main__":
    main()
