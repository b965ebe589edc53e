-- Schema v4: what the read side needs to keep its search index (a separate file, written only
-- by the read commands) in step with this database without ever writing here.
--
-- Every hook parses the whole schema when it opens the database (measured: about 30,000
-- instructions per trigger, 18,000 per table), so what is here is short and there is no more
-- of it than needed; comments stay outside the statements, which SQLite stores as written.

-- Facts about this database. `store_id` is drawn once: an index built from another database
-- (this file replaced, restored, or renumbered) sees a different id and rebuilds. Anything that
-- renumbers rowids (VACUUM renumbers tables without an INTEGER PRIMARY KEY) must draw a new one.
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
INSERT INTO meta (key, value) VALUES ('store_id', lower(hex(randomblob(16))));

-- One row per deleted row of an indexed table, so that what is removed here (a private turn
-- purged; later retention and forget) leaves the index too. Rowids only, nothing of the content.
-- `seq` grows by one with each tombstone; pruning must keep the newest, so that it never goes
-- back: a reader that finds tombstones it has not seen already pruned rebuilds its index.
CREATE TABLE tombstones (seq INTEGER PRIMARY KEY, source TEXT NOT NULL, row INTEGER NOT NULL);

-- Triggers on DELETE only: the inserts of the hot path never run them. Sessions are not
-- deleted by anything yet; what comes to forget a session adds the trigger for them.
CREATE TRIGGER user_prompts_tombstone AFTER DELETE ON user_prompts BEGIN
INSERT INTO tombstones VALUES (NULL, 'user_prompts', old.rowid); END;
CREATE TRIGGER pending_queue_tombstone AFTER DELETE ON pending_queue BEGIN
INSERT INTO tombstones VALUES (NULL, 'pending_queue', old.rowid); END;
