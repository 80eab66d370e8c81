"""What to work on and what was done: an annotator's work list, the unfinished documents
in an order (import, or the model's uncertainty), search by text, and a version's history."""

from __future__ import annotations

from opinion_tagger.annotation.store.documents import Documents
from opinion_tagger.annotation.store.records import FINAL, DocumentInfo, ProjectError

ORDERS = ("file", "uncertainty")
ORDER_RULES = {
    "file": "import order",
    "uncertainty": "least confident model span first (the document whose lowest model score is lowest); "
    "documents without model spans last, in import order",
}


class Queries(Documents):
    """What an annotator works on and in which order; search; a version's history."""

    # what an annotator works on, per document: the shared version of a document without overlap, their
    # copy of one with it, or (status 'todo') a copy still to be made while fewer than its overlap exist;
    # NULL status: not theirs (its annotators are complete without them, or it was reviewed before they
    # finished their copy)
    _WORK = (
        "work AS (SELECT d.id AS id, d.overlap AS overlap, c.owner AS owner, "
        "CASE WHEN :who IS NULL OR d.overlap = 0 THEN d.status "
        "WHEN c.owner IS NOT NULL AND d.status IN ('done', 'rejected') AND c.status IN ('todo', 'in_progress') "
        "THEN NULL WHEN c.owner IS NOT NULL THEN c.status "
        "WHEN d.status IN ('todo', 'in_progress') AND "
        "(SELECT COUNT(*) FROM copies k WHERE k.doc_id = d.id) < d.overlap THEN 'todo' END AS status, "
        "CASE WHEN :who IS NULL OR d.overlap = 0 OR c.owner IS NULL THEN '' ELSE c.owner END AS layer "
        "FROM documents d LEFT JOIN copies c ON c.doc_id = d.id AND c.owner = :who)"
    )
    # the uncertainty order's key: (no model span, lowest model score in the version worked on, import order)
    _RANKED = (
        "WITH " + _WORK + ", ranked AS (SELECT id, status, low IS NULL AS none, COALESCE(low, 0.0) AS low "
        "FROM (SELECT w.id, w.status, (SELECT MIN(score) FROM spans s WHERE s.doc_id = w.id AND "
        "s.owner = w.layer AND s.source = 'model' AND s.score IS NOT NULL) AS low FROM work w)) "
    )

    def work_list(self, annotator: str | None) -> list[DocumentInfo]:
        """The documents ``annotator`` works on, in import order, each as they see it (``layer``: ''
        for a shared document, their name for their copy, made or still to be made)."""
        with self._lock:
            rows = self.db.execute(
                "WITH " + self._WORK + " SELECT d.id, d.name, w.status, "
                "CASE WHEN w.owner IS NULL THEN d.version ELSE c.version END, "
                "(SELECT COUNT(*) FROM spans s WHERE s.doc_id = d.id AND s.owner = w.layer "
                "AND (w.overlap = 0 OR w.owner IS NOT NULL OR s.source = 'model')), "
                "CASE WHEN w.overlap = 0 THEN d.annotator ELSE w.owner END, COALESCE(c.updated, d.updated), "
                "d.overlap, CASE WHEN w.overlap = 0 THEN '' ELSE :who END "
                "FROM documents d JOIN work w ON w.id = d.id LEFT JOIN copies c ON c.doc_id = d.id AND c.owner = :who "
                "WHERE w.status IS NOT NULL ORDER BY d.id",
                {"who": annotator},
            ).fetchall()
        return [DocumentInfo(*r) for r in rows]

    def queue(self, order: str = "file", annotator: str | None = None) -> list[int]:
        """The unfinished documents (to do, in progress) in the order ``next`` follows: ``file``
        (import order) or ``uncertainty`` (see ``ORDER_RULES``); with ``annotator``, those they work
        on, by the status of their copy where the document has an overlap (``work_list``)."""
        if order not in ORDERS:
            raise ProjectError(f"unknown order {order!r} (choose from {', '.join(ORDERS)})")
        key = "id" if order == "file" else "none, low, id"
        with self._lock:
            rows = self.db.execute(
                self._RANKED + f"SELECT id FROM ranked WHERE status IN ('todo', 'in_progress') ORDER BY {key}",
                {"who": annotator},
            ).fetchall()
        return [r[0] for r in rows]

    def next_unfinished(
        self, after: int | None = None, order: str = "file", annotator: str | None = None
    ) -> int | None:
        """The first unfinished document (to do, in progress) after ``after`` in ``order``
        (wrapping round), or None when none is left; ``annotator`` as for ``queue``.  In the
        uncertainty order "after" is by ``after``'s key now (its spans may have changed since it
        was chosen)."""
        if order not in ORDERS:
            raise ProjectError(f"unknown order {order!r} (choose from {', '.join(ORDERS)})")
        key = "id" if order == "file" else "none, low, id"
        params = {"who": annotator, "after": after}
        unfinished = self._RANKED + "SELECT id FROM ranked WHERE status IN ('todo', 'in_progress') "
        with self._lock:
            row = None
            if after is not None:
                row = self.db.execute(
                    unfinished + f"AND ({key}) > (SELECT {key} FROM ranked WHERE id = :after) ORDER BY {key} LIMIT 1",
                    params,
                ).fetchone()
            if row is None:
                row = self.db.execute(unfinished + f"ORDER BY {key} LIMIT 1", params).fetchone()
        return row[0] if row else None

    def search(self, query: str, limit: int = 50) -> list[tuple[int, str, str]]:
        """Documents whose text (or name) contains ``query`` (case-insensitive for ASCII letters,
        SQLite's LIKE; ``%`` and ``_`` match themselves), in import order: ``(id, name, snippet)``,
        the snippet about 80 characters round the first match in the text ("" when only the
        name matched)."""
        query = query.strip()
        if not query:
            return []
        pattern = "%" + query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        with self._lock:
            rows = self.db.execute(
                "SELECT id, name, text FROM documents WHERE text LIKE ? ESCAPE '\\' "
                "OR name LIKE ? ESCAPE '\\' ORDER BY id LIMIT ?",
                (pattern, pattern, limit),
            ).fetchall()
        out = []
        for doc_id, name, text in rows:
            at = text.lower().find(query.lower())
            snippet = ""
            if at >= 0:
                a, b = max(0, at - 30), min(len(text), at + len(query) + 50)
                snippet = ("…" if a else "") + " ".join(text[a:b].split()) + ("…" if b < len(text) else "")
            out.append((doc_id, name, snippet))
        return out

    def history(self, doc_id: int, layer: str = FINAL) -> list[dict]:
        with self._lock:
            rows = self.db.execute(
                "SELECT version, action, annotator, at FROM history WHERE doc_id = ? AND owner = ? ORDER BY id",
                (doc_id, layer),
            ).fetchall()
        return [dict(zip(("version", "action", "annotator", "at"), r)) for r in rows]
