-- an annotation project as opinion-tagger wrote it at schema version 3 (sqlite3's iterdump; invented
-- sentences): a person's intensity and polarity on a model span, and in a copy; tests/annotation/test_frames.py
-- opens it with today's code
BEGIN TRANSACTION;
CREATE TABLE copies (
    doc_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    owner TEXT NOT NULL CHECK (owner != ''),
    status TEXT NOT NULL DEFAULT 'todo' CHECK (status IN ('todo', 'in_progress', 'done', 'rejected')),
    version INTEGER NOT NULL DEFAULT 0,
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    PRIMARY KEY (doc_id, owner)
) WITHOUT ROWID;
INSERT INTO "copies" VALUES(2,'ben','in_progress',1,'2026-11-28T14:34:46.571+00:00','2026-11-28T14:34:46.575+00:00');
CREATE TABLE documents (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    text TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'todo' CHECK (status IN ('todo', 'in_progress', 'done', 'rejected')),
    version INTEGER NOT NULL DEFAULT 0,
    annotator TEXT,
    model TEXT,
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    overlap INTEGER NOT NULL DEFAULT 0,
    review TEXT
);
INSERT INTO "documents" VALUES(1,'ferry.txt','Lena said the ferry was late. Nobody cared.','done',2,'ana','accurate','2026-11-28T14:34:46.564+00:00','2026-11-28T14:34:46.567+00:00',0,NULL);
INSERT INTO "documents" VALUES(2,'team.txt','Lena said the ferry was late. Nobody cared.','todo',0,NULL,'accurate','2026-11-28T14:34:46.565+00:00','2026-11-28T14:34:46.565+00:00',2,NULL);
CREATE TABLE history (
    id INTEGER PRIMARY KEY,
    doc_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    owner TEXT NOT NULL DEFAULT '',
    version INTEGER NOT NULL,
    action TEXT NOT NULL,
    annotator TEXT,
    at TEXT NOT NULL,
    before TEXT NOT NULL
);
INSERT INTO "history" VALUES(1,1,'',1,'attributes','ana','2026-11-28T14:34:46.566+00:00','{"status": "todo", "spans": [{"id": 1, "type": "DSE", "tok_start": 1, "tok_end": 2, "source": "model", "score": 0.88, "annotator": null, "at": null, "intensity": null, "polarity": null, "origin": null}, {"id": 2, "type": "ESE", "tok_start": 5, "tok_end": 6, "source": "model", "score": 0.61, "annotator": null, "at": null, "intensity": null, "polarity": null, "origin": null}], "review": null}');
INSERT INTO "history" VALUES(2,1,'',2,'status done','ana','2026-11-28T14:34:46.567+00:00','{"status": "in_progress", "spans": [{"id": 1, "type": "DSE", "tok_start": 1, "tok_end": 2, "source": "model", "score": 0.88, "annotator": null, "at": null, "intensity": null, "polarity": null, "origin": null}, {"id": 2, "type": "ESE", "tok_start": 5, "tok_end": 6, "source": "model", "score": 0.61, "annotator": null, "at": null, "intensity": "high", "polarity": "negative", "origin": null}], "review": null}');
INSERT INTO "history" VALUES(3,2,'ben',1,'attributes','ben','2026-11-28T14:34:46.575+00:00','{"status": "todo", "spans": [{"id": 4, "type": "DSE", "tok_start": 1, "tok_end": 2, "source": "model", "score": 0.9, "annotator": null, "at": null, "intensity": null, "polarity": null, "origin": null}]}');
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO "meta" VALUES('schema_version','3');
INSERT INTO "meta" VALUES('types','["DSE", "ESE"]');
INSERT INTO "meta" VALUES('created','2026-11-28T14:34:46.562+00:00');
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
    polarity TEXT CHECK (polarity IN ('positive', 'negative', 'neutral', 'both')),
    owner TEXT NOT NULL DEFAULT '',
    origin TEXT
);
INSERT INTO "spans" VALUES(1,1,'DSE',1,2,'model',0.88,NULL,NULL,NULL,NULL,'',NULL);
INSERT INTO "spans" VALUES(2,1,'ESE',5,6,'model',0.61,NULL,NULL,'high','negative','',NULL);
INSERT INTO "spans" VALUES(3,2,'DSE',1,2,'model',0.9,NULL,NULL,NULL,NULL,'',NULL);
INSERT INTO "spans" VALUES(4,2,'DSE',1,2,'model',0.9,NULL,NULL,NULL,'neutral','ben',NULL);
CREATE TABLE tokens (
    doc_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    sentence INTEGER NOT NULL,
    start INTEGER NOT NULL,
    end INTEGER NOT NULL,
    PRIMARY KEY (doc_id, position)
) WITHOUT ROWID;
INSERT INTO "tokens" VALUES(1,0,0,0,4);
INSERT INTO "tokens" VALUES(1,1,0,5,9);
INSERT INTO "tokens" VALUES(1,2,0,10,13);
INSERT INTO "tokens" VALUES(1,3,0,14,19);
INSERT INTO "tokens" VALUES(1,4,0,20,23);
INSERT INTO "tokens" VALUES(1,5,0,24,28);
INSERT INTO "tokens" VALUES(1,6,0,28,29);
INSERT INTO "tokens" VALUES(1,7,1,30,36);
INSERT INTO "tokens" VALUES(1,8,1,37,42);
INSERT INTO "tokens" VALUES(1,9,1,42,43);
INSERT INTO "tokens" VALUES(2,0,0,0,4);
INSERT INTO "tokens" VALUES(2,1,0,5,9);
INSERT INTO "tokens" VALUES(2,2,0,10,13);
INSERT INTO "tokens" VALUES(2,3,0,14,19);
INSERT INTO "tokens" VALUES(2,4,0,20,23);
INSERT INTO "tokens" VALUES(2,5,0,24,28);
INSERT INTO "tokens" VALUES(2,6,0,28,29);
INSERT INTO "tokens" VALUES(2,7,1,30,36);
INSERT INTO "tokens" VALUES(2,8,1,37,42);
INSERT INTO "tokens" VALUES(2,9,1,42,43);
CREATE INDEX spans_by_layer ON spans(doc_id, owner);
CREATE INDEX history_by_layer ON history(doc_id, owner, id);
COMMIT;
