-- an annotation project as opinion-tagger wrote it at schema version 2 (sqlite3's iterdump;
-- invented sentences); tests/annotation/test_review.py opens it with today's code
BEGIN TRANSACTION;
CREATE TABLE documents (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    text TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'todo' CHECK (status IN ('todo', 'in_progress', 'done', 'rejected')),
    version INTEGER NOT NULL DEFAULT 0,
    annotator TEXT,
    model TEXT,
    created TEXT NOT NULL,
    updated TEXT NOT NULL
);
INSERT INTO "documents" VALUES(1,'harbour.txt','The mayor said the new harbour was a triumph. Fishermen disagreed.','done',4,'ana',NULL,'2026-11-26T02:35:15.260+00:00','2026-11-26T02:35:15.276+00:00');
INSERT INTO "documents" VALUES(2,'sub/rain.txt','Rain fell all night, as usual.','rejected',1,'ben',NULL,'2026-11-26T02:35:15.260+00:00','2026-11-26T02:35:15.280+00:00');
CREATE TABLE history (
    id INTEGER PRIMARY KEY,
    doc_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    version INTEGER NOT NULL,
    action TEXT NOT NULL,
    annotator TEXT,
    at TEXT NOT NULL,
    before TEXT NOT NULL
);
INSERT INTO "history" VALUES(1,1,1,'add DSE','ana','2026-11-26T02:35:15.265+00:00','{"status": "todo", "spans": []}');
INSERT INTO "history" VALUES(2,1,2,'attributes','ana','2026-11-26T02:35:15.269+00:00','{"status": "in_progress", "spans": [{"id": 1, "type": "DSE", "tok_start": 2, "tok_end": 3, "source": "human", "score": null, "annotator": "ana", "at": "2026-11-26T02:35:15.265+00:00", "intensity": null, "polarity": null}]}');
INSERT INTO "history" VALUES(3,1,3,'add ESE','ana','2026-11-26T02:35:15.272+00:00','{"status": "in_progress", "spans": [{"id": 1, "type": "DSE", "tok_start": 2, "tok_end": 3, "source": "human", "score": null, "annotator": "ana", "at": "2026-11-26T02:35:15.265+00:00", "intensity": "medium", "polarity": "neutral"}]}');
INSERT INTO "history" VALUES(4,1,4,'status done','ana','2026-11-26T02:35:15.276+00:00','{"status": "in_progress", "spans": [{"id": 1, "type": "DSE", "tok_start": 2, "tok_end": 3, "source": "human", "score": null, "annotator": "ana", "at": "2026-11-26T02:35:15.265+00:00", "intensity": "medium", "polarity": "neutral"}, {"id": 2, "type": "ESE", "tok_start": 8, "tok_end": 9, "source": "human", "score": null, "annotator": "ana", "at": "2026-11-26T02:35:15.272+00:00", "intensity": null, "polarity": null}]}');
INSERT INTO "history" VALUES(5,2,1,'status rejected','ben','2026-11-26T02:35:15.280+00:00','{"status": "todo", "spans": []}');
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO "meta" VALUES('schema_version','2');
INSERT INTO "meta" VALUES('types','["DSE", "ESE"]');
INSERT INTO "meta" VALUES('created','2026-11-26T02:35:14.453+00:00');
CREATE TABLE spans (
    id INTEGER PRIMARY KEY,
    doc_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    type TEXT NOT NULL,
    tok_start INTEGER NOT NULL,
    tok_end INTEGER NOT NULL CHECK (tok_end > tok_start),
    source TEXT NOT NULL CHECK (source IN ('model', 'human')),
    score REAL,
    annotator TEXT,
    at TEXT,
    intensity TEXT CHECK (intensity IN ('low', 'medium', 'high', 'extreme')),
    polarity TEXT CHECK (polarity IN ('positive', 'negative', 'neutral', 'both'))
);
INSERT INTO "spans" VALUES(1,1,'DSE',2,3,'human',NULL,'ana','2026-11-26T02:35:15.265+00:00','medium','neutral');
INSERT INTO "spans" VALUES(2,1,'ESE',8,9,'human',NULL,'ana','2026-11-26T02:35:15.272+00:00',NULL,NULL);
CREATE TABLE tokens (
    doc_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    sentence INTEGER NOT NULL,
    start INTEGER NOT NULL,
    end INTEGER NOT NULL,
    PRIMARY KEY (doc_id, position)
) WITHOUT ROWID;
INSERT INTO "tokens" VALUES(1,0,0,0,3);
INSERT INTO "tokens" VALUES(1,1,0,4,9);
INSERT INTO "tokens" VALUES(1,2,0,10,14);
INSERT INTO "tokens" VALUES(1,3,0,15,18);
INSERT INTO "tokens" VALUES(1,4,0,19,22);
INSERT INTO "tokens" VALUES(1,5,0,23,30);
INSERT INTO "tokens" VALUES(1,6,0,31,34);
INSERT INTO "tokens" VALUES(1,7,0,35,36);
INSERT INTO "tokens" VALUES(1,8,0,37,44);
INSERT INTO "tokens" VALUES(1,9,0,44,45);
INSERT INTO "tokens" VALUES(1,10,1,46,55);
INSERT INTO "tokens" VALUES(1,11,1,56,65);
INSERT INTO "tokens" VALUES(1,12,1,65,66);
INSERT INTO "tokens" VALUES(2,0,0,0,4);
INSERT INTO "tokens" VALUES(2,1,0,5,9);
INSERT INTO "tokens" VALUES(2,2,0,10,13);
INSERT INTO "tokens" VALUES(2,3,0,14,19);
INSERT INTO "tokens" VALUES(2,4,0,19,20);
INSERT INTO "tokens" VALUES(2,5,0,21,23);
INSERT INTO "tokens" VALUES(2,6,0,24,29);
INSERT INTO "tokens" VALUES(2,7,0,29,30);
CREATE INDEX spans_by_doc ON spans(doc_id);
CREATE INDEX history_by_doc ON history(doc_id, id);
COMMIT;
