-- Schema v5: what the session-start context says of each recent session beyond Claude's last
-- message (the errors met and whether a later run succeeded, the commands run), read with
-- index probes whatever the size of a session. Both indexes are partial: a capture of another
-- tool writes neither, a Bash call writes one entry.

-- Failed tool calls of a session, in time order.
CREATE INDEX pending_queue_failures ON pending_queue (session_id, created_at)
    WHERE event = 'PostToolUseFailure';

-- Commands of a session, in time order.
CREATE INDEX pending_queue_commands ON pending_queue (session_id, created_at)
    WHERE tool_name = 'Bash';
