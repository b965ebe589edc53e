-- Schema v2: every hook's work stays flat in the size of its session (a session can hold
-- hundreds of thousands of captures). Both indexes are partial, so the common capture (its
-- prompt already stored) writes neither.

-- Captures without a prompt number: those that arrived before their (spilled) prompt, those of
-- a private turn applied before the turn was known to be private, and those of Claude Code
-- versions that send no prompt_id. Found when the prompt lands or the turn is purged.
CREATE INDEX pending_queue_unnumbered ON pending_queue (session_id, prompt_id, created_at)
    WHERE prompt_number IS NULL;

-- The summary requests of a session, newest first: Claude's last message is taken from the
-- newest one only.
CREATE INDEX pending_queue_summaries ON pending_queue (session_id, created_at)
    WHERE kind = 'summary';

-- Private turns of a session in time order: a capture without prompt_id belongs to the turn
-- whose prompt came last before it.
CREATE INDEX private_turns_by_session ON private_turns (session_id, created_at);
