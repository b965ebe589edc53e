-- Schema v1. Migrations are append-only: never edit this file once released; add v2.sql.

-- One row per Claude Code session; the id is Claude Code's own.
CREATE TABLE sessions (
    session_id             TEXT PRIMARY KEY,
    project_dir            TEXT,
    cwd                    TEXT,
    transcript_path        TEXT,
    source                 TEXT,             -- last SessionStart source: startup, resume, ...
    model                  TEXT,
    status                 TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'closed')),
    prompt_count           INTEGER NOT NULL DEFAULT 0,
    last_assistant_message TEXT,             -- Claude's last message, stripped
    started_at             TEXT NOT NULL,
    updated_at             TEXT NOT NULL,
    ended_at               TEXT,
    end_reason             TEXT
);
CREATE INDEX sessions_by_project ON sessions (project_dir, updated_at);

-- The user's prompts, numbered per session from 1, private parts removed.
CREATE TABLE user_prompts (
    id            TEXT PRIMARY KEY,         -- UUID v7
    session_id    TEXT NOT NULL,
    prompt_id     TEXT,                     -- Claude Code's prompt_id, shared with the turn's captures
    prompt_number INTEGER NOT NULL,
    prompt_text   TEXT NOT NULL,
    truncated     INTEGER NOT NULL DEFAULT 0,
    created_at    TEXT NOT NULL,
    UNIQUE (session_id, prompt_number),
    UNIQUE (session_id, prompt_id)
);

-- Turns whose prompt was private as a whole: their captures are not stored.
CREATE TABLE private_turns (
    prompt_id  TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    created_at TEXT NOT NULL
);

-- The durable queue a consumer drains. No foreign key on session_id: a capture can arrive
-- before its session row. priority: 0 high, 1 normal, 2 low (ORDER BY priority drains high first).
CREATE TABLE pending_queue (
    id            TEXT PRIMARY KEY,         -- UUID v7
    kind          TEXT NOT NULL DEFAULT 'observation' CHECK (kind IN ('observation', 'summary')),
    session_id    TEXT NOT NULL,
    tool_use_id   TEXT,
    prompt_id     TEXT,
    prompt_number INTEGER,
    event         TEXT NOT NULL,            -- PostToolUse, PostToolUseFailure, Stop
    tool_name     TEXT,
    project_dir   TEXT,
    files_touched TEXT NOT NULL DEFAULT '[]', -- JSON array (before raw_output: read without it)
    raw_output    TEXT NOT NULL,            -- JSON object
    priority      INTEGER NOT NULL DEFAULT 1 CHECK (priority IN (0, 1, 2)),
    status        TEXT NOT NULL DEFAULT 'raw' CHECK (status IN ('raw', 'claimed', 'done', 'failed')),
    attempts      INTEGER NOT NULL DEFAULT 0,
    claimed_by    TEXT,
    claimed_at    TEXT,
    lease_until   TEXT,
    last_error    TEXT,
    payload_bytes INTEGER NOT NULL DEFAULT 0,
    truncated     INTEGER NOT NULL DEFAULT 0,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    UNIQUE (session_id, tool_use_id)
);
CREATE INDEX pending_queue_drain ON pending_queue (status, priority, created_at);
-- Lookups by session use the UNIQUE (session_id, tool_use_id) index: one index less to write
-- on every capture. The changes of a session (for the session-start context) have their own
-- partial index, so a session with 50,000 captures costs no more than one with 5.
CREATE INDEX pending_queue_changes ON pending_queue (session_id, created_at)
    WHERE tool_name IN ('Write', 'Edit', 'MultiEdit', 'NotebookEdit');

-- What happened to sessions, for operators: starts, stops, ends.
CREATE TABLE event_log (
    id         TEXT PRIMARY KEY,            -- the id of the write that logged it
    session_id TEXT,
    event      TEXT NOT NULL,
    detail     TEXT,                        -- JSON object
    created_at TEXT NOT NULL
);
CREATE INDEX event_log_by_session ON event_log (session_id, created_at);
