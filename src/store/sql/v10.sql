-- Schema v10. The ids of the memories and summaries `forget` removed (src/store/hygiene/forget.rs),
-- never their text. A project's `.claude-mem/` folder can hold the file `share` wrote of one of
-- them after the forget: a teammate's branch merged since, a file the forget could not remove
-- (edited, not of this database). Readers show a team's file only when its id is neither held
-- here nor listed here (`read::context::known`), so that what the user forgot never comes back
-- to them as the team's, whatever the file's `origin:` says. Retention does not list what it
-- deletes: only what the user asked to forget.
CREATE TABLE forgotten (id TEXT PRIMARY KEY, at TEXT NOT NULL) WITHOUT ROWID;

-- Sessions an earlier release recorded under a subfolder of a repository, moved to
-- the repository's project (`claude-mem projects join`, run once by the maintenance process),
-- each with the folder it was recorded under, so that `projects unjoin` puts every one back.
-- project_ids: the identity (`project::identity`, a remote's URL) of folders another machine
-- recorded sessions under, as sync brought it, so that they are filed under this machine's
-- checkout of the same repository once there is one. No hook reads either.
CREATE TABLE project_ids (project_dir TEXT PRIMARY KEY, identity TEXT NOT NULL);
CREATE TABLE project_moves (session_id TEXT PRIMARY KEY, from_dir TEXT NOT NULL,
    to_dir TEXT NOT NULL, moved_at TEXT NOT NULL);
