-- Schema v10: the ids of the memories and summaries `forget` removed (src/store/hygiene/forget.rs),
-- never their text. A project's `.claude-mem/` folder can hold the file `share` wrote of one of
-- them after the forget: a teammate's branch merged since, a file the forget could not remove
-- (edited, not of this database). Readers show a team's file only when its id is neither held
-- here nor listed here (`read::context::known`), so that what the user forgot never comes back
-- to them as the team's, whatever the file's `origin:` says. Retention does not list what it
-- deletes: only what the user asked to forget.
CREATE TABLE forgotten (id TEXT PRIMARY KEY, at TEXT NOT NULL) WITHOUT ROWID;
