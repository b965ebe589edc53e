-- Schema v7: what retention, forget and scrub need (src/store/retention.rs, forget.rs, scrub.rs).
-- As in v4, comments stay outside the statements: every hook parses the schema it opens.

-- When retention last reduced this session's tool calls to their digest; a session active
-- again since then is looked at again. Nothing indexes it: no hook pays for it.
ALTER TABLE sessions ADD COLUMN reduced_at TEXT;

-- The largest rowid left in the table just after the delete. SQLite hands out the largest rowid
-- plus one, so only rowids above it can come back: the index copies those again, not every row
-- after the deleted one (forgetting an old session would otherwise re-index almost everything).
-- NULL in tombstones written before v7: then everything after the deleted rowid. Every trigger
-- that writes a tombstone names it.
ALTER TABLE tombstones ADD COLUMN below INTEGER;

DROP TRIGGER user_prompts_tombstone;
CREATE TRIGGER user_prompts_tombstone AFTER DELETE ON user_prompts BEGIN
INSERT INTO tombstones VALUES (NULL, 'user_prompts', old.rowid,
coalesce((SELECT max(rowid) FROM user_prompts), 0)); END;
DROP TRIGGER pending_queue_tombstone;
CREATE TRIGGER pending_queue_tombstone AFTER DELETE ON pending_queue BEGIN
INSERT INTO tombstones VALUES (NULL, 'pending_queue', old.rowid,
coalesce((SELECT max(rowid) FROM pending_queue), 0)); END;
DROP TRIGGER memories_tombstone;
CREATE TRIGGER memories_tombstone AFTER DELETE ON memories BEGIN
INSERT INTO tombstones VALUES (NULL, 'memories', old.rowid,
coalesce((SELECT max(rowid) FROM memories), 0)); END;
DROP TRIGGER summaries_tombstone;
CREATE TRIGGER summaries_tombstone AFTER DELETE ON summaries BEGIN
INSERT INTO tombstones VALUES (NULL, 'summaries', old.rowid,
coalesce((SELECT max(rowid) FROM summaries), 0)); END;
-- Sessions are deleted now (forget, retention): their ids leave the index too.
CREATE TRIGGER sessions_tombstone AFTER DELETE ON sessions BEGIN
INSERT INTO tombstones VALUES (NULL, 'sessions', old.rowid,
coalesce((SELECT max(rowid) FROM sessions), 0)); END;
