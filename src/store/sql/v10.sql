-- Schema v10: sessions an earlier release recorded under a subfolder of a repository, moved to
-- the repository's project (`claude-mem projects join`, run once by the maintenance process),
-- each with the folder it was recorded under, so that `projects unjoin` puts every one back.
-- No hook reads it.
CREATE TABLE project_moves (session_id TEXT PRIMARY KEY, from_dir TEXT NOT NULL,
    to_dir TEXT NOT NULL, moved_at TEXT NOT NULL);
