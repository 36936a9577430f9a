"""
Vectors: the embeddings recall searches by meaning.

`Vectors` keeps the embeddings of the memories that have one, at unit length, as rows of a
matrix that grows in place, kept current as the memories change; `nearest` is the search a
worker thread runs on a snapshot of it (cosine similarity, most similar first).

"""

from dataclasses import dataclass, field

import numpy


@dataclass
class Vectors:
    """Embeddings of the memories that have one, as rows of a matrix that grows in place."""

    matrix: numpy.ndarray | None = None
    ids: list[str] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)

    def put(self, doc_id: str, vector) -> None:
        vector = numpy.asarray(vector, dtype=numpy.float32)
        norm = float(numpy.linalg.norm(vector)) or 1.0
        vector = vector / norm
        if self.matrix is not None and self.matrix.shape[1] != vector.shape[0]:
            if self.rows:
                # of another model (a fact embedded before the model changed): not comparable
                # with the others, and the journal's are embedded again with the new one
                return
            self.matrix, self.ids = None, []
        if doc_id in self.rows:
            self.matrix[self.rows[doc_id]] = vector
            return
        count = len(self.ids)
        if self.matrix is None:
            self.matrix = numpy.zeros((64, vector.shape[0]), dtype=numpy.float32)
            self.ids, self.rows, count = [], {}, 0
        elif count == self.matrix.shape[0]:
            # a quarter more rows at a time, not twice as many: doubling left up to half the
            # matrix empty (at 9,000 vectors of 384 dimensions, 11 of its 24 MiB), and the
            # extra copies cost nothing measurable (9,000 puts take 41 ms either way)
            grown = numpy.zeros((count + max(64, count // 4), vector.shape[0]), dtype=numpy.float32)
            grown[:count] = self.matrix
            self.matrix = grown
        self.matrix[count] = vector
        self.ids.append(doc_id)
        self.rows[doc_id] = count

    def drop(self, doc_id: str) -> None:
        row = self.rows.pop(doc_id, None)
        if row is not None:
            self.matrix[row] = 0.0

    def snapshot(self) -> tuple[numpy.ndarray | None, list[str]]:
        """What a worker thread may read while the reactor thread adds rows."""
        count = len(self.ids)
        return (None if self.matrix is None else self.matrix[:count]), list(self.ids)


def nearest(snapshot, query_vector, limit: int | None = None) -> list[tuple[str, float]]:
    """The rows of `snapshot` most similar to `query_vector` (a worker thread's job).

    Recall asks for every row, not its number of candidates: it keeps those its audience may
    see and stops at enough of them (`MemoryIndex.search`), so rows it may not show never
    take the place of one it may.

    Args:
        snapshot (tuple): A matrix of unit-length rows and their ids, from
            `IndexedMemories.vector_snapshot` (`memory.indexing`).
        query_vector (list or numpy.ndarray): The query's embedding.
        limit (int, optional): The most rows to return; None: every row above 0.

    Returns:
        list: (id, cosine similarity) pairs, most similar first, only those above 0; empty
            when there are no vectors, no query vector, or the sizes differ.

    """
    matrix, ids = snapshot
    if matrix is None or not len(ids) or query_vector is None:
        return []
    query = numpy.asarray(query_vector, dtype=numpy.float32)
    if query.shape[0] != matrix.shape[1]:
        return []
    query = query / (float(numpy.linalg.norm(query)) or 1.0)
    similarity = matrix @ query
    rows = numpy.flatnonzero(similarity > 0)
    if limit is not None and len(rows) > limit:
        rows = rows[numpy.argpartition(-similarity[rows], limit - 1)[:limit]]
    ranked = rows[numpy.argsort(-similarity[rows], kind="stable")]
    return [(ids[row], float(similarity[row])) for row in ranked]
