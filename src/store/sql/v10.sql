-- Schema v10: sessions an earlier release recorded under a subfolder of a repository, moved to
-- the repository's project (`claude-mem projects join`, run once by the maintenance process),
-- each with the folder it was recorded under, so that `projects unjoin` puts every one back.
-- project_ids: the identity (`project::identity`, a remote's URL) of folders another machine
-- recorded sessions under, as sync brought it, so that they are filed under this machine's
-- checkout of the same repository once there is one. No hook reads either.
CREATE TABLE project_ids (project_dir TEXT PRIMARY KEY, identity TEXT NOT NULL);
CREATE TABLE project_moves (session_id TEXT PRIMARY KEY, from_dir TEXT NOT NULL,
    to_dir TEXT NOT NULL, moved_at TEXT NOT NULL);
