-- Schema v9: standing instructions (src/standing/). `standing` marks, one bit a sentence, the
-- sentences of a prompt that state one (0 or NULL: none), set when the prompt is stored (and
-- here, in Rust, for the prompts stored before: see `sql::after`); the text is the prompt's
-- own, taken again when the rules are listed, so that a forget or a scrub of the prompt leaves
-- no copy. `pinned_at`: when the user pinned its rules
-- (`claude-mem conventions pin`), which keeps them in every session's context whatever the
-- budget. The partial index holds only the prompts that state one, so that a session start
-- reads them without a scan.
ALTER TABLE user_prompts ADD COLUMN standing INTEGER;
ALTER TABLE user_prompts ADD COLUMN pinned_at TEXT;
CREATE INDEX user_prompts_standing ON user_prompts (created_at) WHERE standing > 0;
