-- Schema v6: what the compressor (`claude-mem compress`) makes of the queue, and what it spent.
-- No hook writes these tables; every hook parses them when it opens the database, so they stay
-- few and short, with the comments outside the statements (SQLite stores those as written),
-- and indexed only as they are read (by session; the search index finds them by project).
--
-- memories: typed observations, each from one or more queue items. The columns are those of
-- thedotmack/claude-mem's `observations` under our names (session_id is the Claude Code
-- session, which theirs reach through sdk_sessions.content_session_id; project is project_dir;
-- created_at their ISO time), so that an import from it keeps every field: what has no column
-- here (text, content_hash, metadata, agent_type, discovery_tokens, ...) goes whole into
-- `extra`, a JSON object.
-- `key` makes storing idempotent: the compressor's is the batch's key and the memory's place in
-- it, an import's names the row it came from. `queue_ids`, `facts`, `concepts`, `files_read`,
-- `files_modified` are JSON arrays. `created_at` is when the work happened (the newest item it
-- came from), not when it was compressed.
CREATE TABLE memories (id TEXT PRIMARY KEY, key TEXT NOT NULL UNIQUE, session_id TEXT NOT NULL,
    project_dir TEXT, prompt_number INTEGER, type TEXT NOT NULL, title TEXT NOT NULL,
    subtitle TEXT, narrative TEXT NOT NULL DEFAULT '', facts TEXT NOT NULL DEFAULT '[]',
    concepts TEXT NOT NULL DEFAULT '[]', files_read TEXT NOT NULL DEFAULT '[]',
    files_modified TEXT NOT NULL DEFAULT '[]', queue_ids TEXT NOT NULL DEFAULT '[]',
    origin TEXT NOT NULL CHECK (origin IN ('compressor', 'import')), model TEXT, extra TEXT,
    created_at TEXT NOT NULL);
CREATE INDEX memories_by_session ON memories (session_id, created_at);

-- summaries: what a session asked, investigated, learned, completed and left next, as of its
-- turn `prompt_number`; the incumbent's `session_summaries` (notes and files included).
CREATE TABLE summaries (id TEXT PRIMARY KEY, key TEXT NOT NULL UNIQUE, session_id TEXT NOT NULL,
    project_dir TEXT, prompt_number INTEGER, request TEXT NOT NULL DEFAULT '',
    investigated TEXT NOT NULL DEFAULT '', learned TEXT NOT NULL DEFAULT '',
    completed TEXT NOT NULL DEFAULT '', next_steps TEXT NOT NULL DEFAULT '', notes TEXT,
    files_read TEXT NOT NULL DEFAULT '[]', files_edited TEXT NOT NULL DEFAULT '[]',
    queue_ids TEXT NOT NULL DEFAULT '[]',
    origin TEXT NOT NULL CHECK (origin IN ('compressor', 'import')), model TEXT, extra TEXT,
    created_at TEXT NOT NULL);
CREATE INDEX summaries_by_session ON summaries (session_id, created_at);

-- The spend ledger: one row per model call, written before the call with the tokens it is
-- expected to use (so that compressors running at once share one daily budget, and a call
-- whose compressor was killed still counts) and settled with what the model reported. `day` is
-- the local date the budget is counted in; `tokens` all tokens read and written (cached ones
-- included); `outcome` pending, stored, invalid, failed, timeout or unavailable.
CREATE TABLE compress_calls (id TEXT PRIMARY KEY, day TEXT NOT NULL, batch TEXT NOT NULL,
    items INTEGER NOT NULL, model TEXT, tokens INTEGER NOT NULL, input_tokens INTEGER,
    output_tokens INTEGER, cache_read_tokens INTEGER, cache_write_tokens INTEGER,
    cost_usd REAL, estimated INTEGER NOT NULL, outcome TEXT NOT NULL, error TEXT,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE INDEX compress_calls_by_day ON compress_calls (day);

CREATE TRIGGER memories_tombstone AFTER DELETE ON memories BEGIN
INSERT INTO tombstones VALUES (NULL, 'memories', old.rowid); END;
CREATE TRIGGER summaries_tombstone AFTER DELETE ON summaries BEGIN
INSERT INTO tombstones VALUES (NULL, 'summaries', old.rowid); END;
