-- Schema v12: which coding agent a session ran in (src/agent/): `claude-code`, `codex`,
-- `cursor`. Set by the session's first write and never changed after (every write of a
-- session comes from the same agent). The rows before this version were all Claude Code's:
-- the default fills them without a rewrite of the table. The readers filter on it
-- (`--agent`) within a project's sessions, which the project index already narrows.
ALTER TABLE sessions ADD COLUMN agent TEXT NOT NULL DEFAULT 'claude-code';
