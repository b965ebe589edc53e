CREATE TEMP TRIGGER IF NOT EXISTS user_prompts_tombstone AFTER DELETE ON main.user_prompts BEGIN
INSERT INTO tombstones VALUES (NULL, 'user_prompts', old.rowid,
coalesce((SELECT max(rowid) FROM main.user_prompts), 0)); END;
CREATE TEMP TRIGGER IF NOT EXISTS pending_queue_tombstone AFTER DELETE ON main.pending_queue BEGIN
INSERT INTO tombstones VALUES (NULL, 'pending_queue', old.rowid,
coalesce((SELECT max(rowid) FROM main.pending_queue), 0)); END;
CREATE TEMP TRIGGER IF NOT EXISTS memories_tombstone AFTER DELETE ON main.memories BEGIN
INSERT INTO tombstones VALUES (NULL, 'memories', old.rowid,
coalesce((SELECT max(rowid) FROM main.memories), 0)); END;
CREATE TEMP TRIGGER IF NOT EXISTS summaries_tombstone AFTER DELETE ON main.summaries BEGIN
INSERT INTO tombstones VALUES (NULL, 'summaries', old.rowid,
coalesce((SELECT max(rowid) FROM main.summaries), 0)); END;
CREATE TEMP TRIGGER IF NOT EXISTS sessions_tombstone AFTER DELETE ON main.sessions BEGIN
INSERT INTO tombstones VALUES (NULL, 'sessions', old.rowid,
coalesce((SELECT max(rowid) FROM main.sessions), 0)); END;
