-- Schema v14: the tombstones (v4, v7) are no longer written by triggers stored in the file.
-- SQLite parses every trigger of the schema in every process that opens the database, and
-- every hook is such a process: the five were 10% of a 1 KB capture's instructions
-- (callgrind, 2.01 M against 1.81 M without them). The same triggers are now TEMP triggers,
-- made by the connections that delete (`store::base::tombstones`): every command's, and a
-- hook's before it purges a private turn, the one delete a hook makes. IF EXISTS: a file
-- someone took one out of still upgrades.
DROP TRIGGER IF EXISTS user_prompts_tombstone;
DROP TRIGGER IF EXISTS pending_queue_tombstone;
DROP TRIGGER IF EXISTS memories_tombstone;
DROP TRIGGER IF EXISTS summaries_tombstone;
DROP TRIGGER IF EXISTS sessions_tombstone;
