-- an annotation project as opinion-tagger wrote it at schema version 4 (sqlite3's iterdump; invented
-- sentences): the model's frames (a DSE's holder), a person's holder, accepted, and a copy with a
-- person's intensity; tests/annotation/test_roles.py opens it with today's code
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
INSERT INTO "copies" VALUES(2,'ben','in_progress',1,'2026-12-05T00:06:47.221+00:00','2026-12-05T00:06:47.222+00:00');
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
INSERT INTO "documents" VALUES(1,'tax.txt','Omar feared the new tax. It passed anyway.','done',2,'ana','accurate','2026-12-05T00:06:47.220+00:00','2026-12-05T00:06:47.221+00:00',0,NULL);
INSERT INTO "documents" VALUES(2,'team.txt','Omar feared the new tax. It passed anyway.','todo',0,NULL,'accurate','2026-12-05T00:06:47.220+00:00','2026-12-05T00:06:47.220+00:00',2,NULL);
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
INSERT INTO "history" VALUES(1,1,'',1,'holder','ana','2026-12-05T00:06:47.221+00:00','{"status": "todo", "spans": [{"id": 1, "type": "DSE", "tok_start": 1, "tok_end": 2, "source": "model", "score": 0.83, "annotator": null, "at": null, "intensity": null, "polarity": "negative", "origin": null, "polarity_source": "model", "polarity_score": 0.77, "intensity_source": null, "intensity_score": null, "holder": "span", "holder_start": 0, "holder_end": 1, "holder_source": "model", "holder_score": 0.64}, {"id": 2, "type": "ESE", "tok_start": 8, "tok_end": 9, "source": "model", "score": 0.58, "annotator": null, "at": null, "intensity": "low", "polarity": null, "origin": null, "polarity_source": null, "polarity_score": null, "intensity_source": "model", "intensity_score": 0.52, "holder": null, "holder_start": null, "holder_end": null, "holder_source": null, "holder_score": null}], "review": null}');
INSERT INTO "history" VALUES(2,1,'',2,'status done','ana','2026-12-05T00:06:47.221+00:00','{"status": "in_progress", "spans": [{"id": 1, "type": "DSE", "tok_start": 1, "tok_end": 2, "source": "model", "score": 0.83, "annotator": null, "at": null, "intensity": null, "polarity": "negative", "origin": null, "polarity_source": "model", "polarity_score": 0.77, "intensity_source": null, "intensity_score": null, "holder": "writer", "holder_start": null, "holder_end": null, "holder_source": "human", "holder_score": null}, {"id": 2, "type": "ESE", "tok_start": 8, "tok_end": 9, "source": "model", "score": 0.58, "annotator": null, "at": null, "intensity": "low", "polarity": null, "origin": null, "polarity_source": null, "polarity_score": null, "intensity_source": "model", "intensity_score": 0.52, "holder": null, "holder_start": null, "holder_end": null, "holder_source": null, "holder_score": null}], "review": null}');
INSERT INTO "history" VALUES(3,2,'ben',1,'attributes','ben','2026-12-05T00:06:47.222+00:00','{"status": "todo", "spans": [{"id": 5, "type": "DSE", "tok_start": 1, "tok_end": 2, "source": "model", "score": 0.83, "annotator": null, "at": null, "intensity": null, "polarity": "negative", "origin": null, "polarity_source": "model", "polarity_score": 0.77, "intensity_source": null, "intensity_score": null, "holder": "span", "holder_start": 0, "holder_end": 1, "holder_source": "model", "holder_score": 0.64}, {"id": 6, "type": "ESE", "tok_start": 8, "tok_end": 9, "source": "model", "score": 0.58, "annotator": null, "at": null, "intensity": "low", "polarity": null, "origin": null, "polarity_source": null, "polarity_score": null, "intensity_source": "model", "intensity_score": 0.52, "holder": null, "holder_start": null, "holder_end": null, "holder_source": null, "holder_score": null}]}');
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO "meta" VALUES('schema_version','4');
INSERT INTO "meta" VALUES('types','["DSE", "ESE"]');
INSERT INTO "meta" VALUES('created','2026-12-05T00:06:47.220+00:00');
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
    intensity TEXT CHECK (intensity IN ('low', 'medium', 'high', 'extreme', 'neutral')),
    polarity TEXT CHECK (polarity IN ('positive', 'negative', 'neutral', 'both')),
    owner TEXT NOT NULL DEFAULT '',
    origin TEXT,
    polarity_source TEXT CHECK (polarity_source IN ('model', 'human')),
    polarity_score REAL,
    intensity_source TEXT CHECK (intensity_source IN ('model', 'human')),
    intensity_score REAL,
    holder TEXT CHECK (holder IN ('writer', 'implicit', 'none', 'span')),
    holder_start INTEGER,
    holder_end INTEGER,
    holder_source TEXT CHECK (holder_source IN ('model', 'human')),
    holder_score REAL,
    CHECK ((holder = 'span') = (holder_start IS NOT NULL AND holder_end > holder_start))
);
INSERT INTO "spans" VALUES(1,1,'DSE',1,2,'model',0.83,NULL,NULL,NULL,'negative','',NULL,'model',0.77,NULL,NULL,'writer',NULL,NULL,'human',NULL);
INSERT INTO "spans" VALUES(2,1,'ESE',8,9,'model',0.58,NULL,NULL,'low',NULL,'',NULL,NULL,NULL,'model',0.52,NULL,NULL,NULL,NULL,NULL);
INSERT INTO "spans" VALUES(3,2,'DSE',1,2,'model',0.83,NULL,NULL,NULL,'negative','',NULL,'model',0.77,NULL,NULL,'span',0,1,'model',0.64);
INSERT INTO "spans" VALUES(4,2,'ESE',8,9,'model',0.58,NULL,NULL,'low',NULL,'',NULL,NULL,NULL,'model',0.52,NULL,NULL,NULL,NULL,NULL);
INSERT INTO "spans" VALUES(5,2,'DSE',1,2,'model',0.83,NULL,NULL,'high','negative','ben',NULL,'model',0.77,'human',NULL,'span',0,1,'model',0.64);
INSERT INTO "spans" VALUES(6,2,'ESE',8,9,'model',0.58,NULL,NULL,'low',NULL,'ben',NULL,NULL,NULL,'model',0.52,NULL,NULL,NULL,NULL,NULL);
CREATE TABLE tokens (
    doc_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    sentence INTEGER NOT NULL,
    start INTEGER NOT NULL,
    end INTEGER NOT NULL,
    PRIMARY KEY (doc_id, position)
) WITHOUT ROWID;
INSERT INTO "tokens" VALUES(1,0,0,0,4);
INSERT INTO "tokens" VALUES(1,1,0,5,11);
INSERT INTO "tokens" VALUES(1,2,0,12,15);
INSERT INTO "tokens" VALUES(1,3,0,16,19);
INSERT INTO "tokens" VALUES(1,4,0,20,23);
INSERT INTO "tokens" VALUES(1,5,0,23,24);
INSERT INTO "tokens" VALUES(1,6,1,25,27);
INSERT INTO "tokens" VALUES(1,7,1,28,34);
INSERT INTO "tokens" VALUES(1,8,1,35,41);
INSERT INTO "tokens" VALUES(1,9,1,41,42);
INSERT INTO "tokens" VALUES(2,0,0,0,4);
INSERT INTO "tokens" VALUES(2,1,0,5,11);
INSERT INTO "tokens" VALUES(2,2,0,12,15);
INSERT INTO "tokens" VALUES(2,3,0,16,19);
INSERT INTO "tokens" VALUES(2,4,0,20,23);
INSERT INTO "tokens" VALUES(2,5,0,23,24);
INSERT INTO "tokens" VALUES(2,6,1,25,27);
INSERT INTO "tokens" VALUES(2,7,1,28,34);
INSERT INTO "tokens" VALUES(2,8,1,35,41);
INSERT INTO "tokens" VALUES(2,9,1,41,42);
CREATE INDEX spans_by_layer ON spans(doc_id, owner);
CREATE INDEX history_by_layer ON history(doc_id, owner, id);
COMMIT;
