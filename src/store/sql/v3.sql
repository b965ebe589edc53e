-- Schema v3: the queue's consumer contract (see src/store/queue.rs).

-- The lease an item is held under: a fresh random token per claim, required by ack, fail and
-- release, so that a consumer whose lease ended and whose item was claimed again cannot touch
-- it. Kept after the item is settled, so that settling it twice is told apart from a lost lease.
ALTER TABLE pending_queue ADD COLUMN lease_token TEXT;
-- A failed item to be tried again: not claimable before this time. NULL on an item that failed
-- for good (and on every item in another state).
ALTER TABLE pending_queue ADD COLUMN retry_at TEXT;

-- Claimed items by the end of their lease: a claim finds those whose lease has ended without
-- reading every item in flight (a table lookup each, a disk read each in a large database).
CREATE INDEX pending_queue_leases ON pending_queue (lease_until) WHERE status = 'claimed';
-- Failed items whose backoff has ended, found without walking those that failed for good.
CREATE INDEX pending_queue_retries ON pending_queue (retry_at) WHERE retry_at IS NOT NULL;
-- Summary requests waiting for a consumer, in drain order: `claim --kind summary` must not walk
-- the whole backlog of observations. A capture never writes it; a Stop adds one entry.
CREATE INDEX pending_queue_raw_summaries ON pending_queue (priority, created_at)
    WHERE status = 'raw' AND kind = 'summary';
