-- Schema v13: what each session-start context and per-prompt recall gave (src/given.rs): one
-- row an item given, ids and scores and never the item's text. `prompt_id` is the row id of
-- the prompt whose recall gave it (NULL: the session-start context); `item_session` the
-- session the item is of (NULL for a teammate's note), so that forgetting or pruning a session
-- takes the records that name its items too. `reason` is a short code (`recent`, `memory`,
-- `thread`, `rule`, `team`, `match`), `score` the share of the prompt's weight the item
-- matched where a bar was cleared, `bytes` the size of the item's lines in what was given.
CREATE TABLE given (
    session_id   TEXT NOT NULL,
    prompt_id    TEXT,
    giving       TEXT NOT NULL,
    item_id      TEXT NOT NULL,
    item_session TEXT,
    score        REAL,
    reason       TEXT NOT NULL,
    bytes        INTEGER NOT NULL,
    at           TEXT NOT NULL
);
CREATE INDEX given_by_session ON given (session_id, prompt_id);
CREATE INDEX given_by_item ON given (item_session, item_id);
