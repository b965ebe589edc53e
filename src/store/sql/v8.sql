-- Schema v8: claude-mem's own MCP tools are no longer captured (see `privacy::is_our_tool`):
-- their answers are the memory itself (a `get` holds a whole earlier session), so storing them
-- kept a copy of what forget removes, filled search results with the memory's own answers and
-- made the compressor pay to summarise them. What earlier versions stored of them goes; the
-- search index takes it out through the tombstones. Their text also stays in the unused space
-- of pages until the file is rebuilt: `rebuild` in meta asks the maintenance process to
-- (src/store/rebuild.rs), only when there was anything to delete. GLOB, not LIKE: `_` is a
-- character of the names and the names are case-sensitive. A full pass over the queue, once.
DELETE FROM pending_queue
 WHERE tool_name GLOB 'mcp__claude-mem__*' OR tool_name GLOB 'mcp__plugin_*_claude-mem__*';
INSERT OR REPLACE INTO meta (key, value) SELECT 'rebuild', '1' WHERE changes() > 0;
