-- The schema as the migrations leave it (version 14), whole, for a new file: made in one step,
-- where the fourteen migrations reparse the schema after each ALTER TABLE (the first hook of a
-- new data dir ran 18.6 million instructions, 16.6 of them migrating, while every other hook
-- of a burst waited for it). A migration that changes the schema changes this file too:
-- `sql::tests::a_new_file_gets_the_schema_the_migrations_make` fails until it does. The text is
-- the compact one (`compact.rs`), as SQLite keeps it.
CREATE TABLE sessions(session_id TEXT PRIMARY KEY,project_dir TEXT,cwd TEXT,transcript_path TEXT,source TEXT,model TEXT,status TEXT NOT NULL DEFAULT 'active' CHECK(status IN('active','closed')),prompt_count INTEGER NOT NULL DEFAULT 0,last_assistant_message TEXT,started_at TEXT NOT NULL,updated_at TEXT NOT NULL,ended_at TEXT,end_reason TEXT,reduced_at TEXT,agent TEXT NOT NULL DEFAULT 'claude-code');
CREATE INDEX sessions_by_project ON sessions(project_dir,updated_at);
CREATE TABLE user_prompts(id TEXT PRIMARY KEY,session_id TEXT NOT NULL,prompt_id TEXT,prompt_number INTEGER NOT NULL,prompt_text TEXT NOT NULL,truncated INTEGER NOT NULL DEFAULT 0,created_at TEXT NOT NULL,standing INTEGER,pinned_at TEXT,UNIQUE(session_id,prompt_number),UNIQUE(session_id,prompt_id));
CREATE TABLE private_turns(prompt_id TEXT PRIMARY KEY,session_id TEXT NOT NULL,created_at TEXT NOT NULL);
CREATE TABLE pending_queue(id TEXT PRIMARY KEY,kind TEXT NOT NULL DEFAULT 'observation' CHECK(kind IN('observation','summary')),session_id TEXT NOT NULL,tool_use_id TEXT,prompt_id TEXT,prompt_number INTEGER,event TEXT NOT NULL,tool_name TEXT,project_dir TEXT,files_touched TEXT NOT NULL DEFAULT '[]',raw_output TEXT NOT NULL,priority INTEGER NOT NULL DEFAULT 1 CHECK(priority IN(0,1,2)),status TEXT NOT NULL DEFAULT 'raw' CHECK(status IN('raw','claimed','done','failed')),attempts INTEGER NOT NULL DEFAULT 0,claimed_by TEXT,claimed_at TEXT,lease_until TEXT,last_error TEXT,payload_bytes INTEGER NOT NULL DEFAULT 0,truncated INTEGER NOT NULL DEFAULT 0,created_at TEXT NOT NULL,updated_at TEXT NOT NULL,lease_token TEXT,retry_at TEXT,UNIQUE(session_id,tool_use_id));
CREATE INDEX pending_queue_drain ON pending_queue(status,priority,created_at);
CREATE INDEX pending_queue_changes ON pending_queue(session_id,created_at)WHERE tool_name IN('Write','Edit','MultiEdit','NotebookEdit');
CREATE TABLE event_log(id TEXT PRIMARY KEY,session_id TEXT,event TEXT NOT NULL,detail TEXT,created_at TEXT NOT NULL);
CREATE INDEX event_log_by_session ON event_log(session_id,created_at);
CREATE INDEX pending_queue_unnumbered ON pending_queue(session_id,prompt_id,created_at)WHERE prompt_number IS NULL;
CREATE INDEX pending_queue_summaries ON pending_queue(session_id,created_at)WHERE kind = 'summary';
CREATE INDEX private_turns_by_session ON private_turns(session_id,created_at);
CREATE INDEX pending_queue_leases ON pending_queue(lease_until)WHERE status = 'claimed';
CREATE INDEX pending_queue_retries ON pending_queue(retry_at)WHERE retry_at IS NOT NULL;
CREATE INDEX pending_queue_raw_summaries ON pending_queue(priority,created_at)WHERE status = 'raw' AND kind = 'summary';
CREATE TABLE meta(key TEXT PRIMARY KEY,value TEXT NOT NULL)WITHOUT ROWID;
CREATE TABLE tombstones(seq INTEGER PRIMARY KEY,source TEXT NOT NULL,row INTEGER NOT NULL,below INTEGER);
CREATE INDEX pending_queue_failures ON pending_queue(session_id,created_at)WHERE event = 'PostToolUseFailure';
CREATE INDEX pending_queue_commands ON pending_queue(session_id,created_at)WHERE tool_name = 'Bash';
CREATE TABLE memories(id TEXT PRIMARY KEY,key TEXT NOT NULL UNIQUE,session_id TEXT NOT NULL,project_dir TEXT,prompt_number INTEGER,type TEXT NOT NULL,title TEXT NOT NULL,subtitle TEXT,narrative TEXT NOT NULL DEFAULT '',facts TEXT NOT NULL DEFAULT '[]',concepts TEXT NOT NULL DEFAULT '[]',files_read TEXT NOT NULL DEFAULT '[]',files_modified TEXT NOT NULL DEFAULT '[]',queue_ids TEXT NOT NULL DEFAULT '[]',origin TEXT NOT NULL CHECK(origin IN('compressor','import')),model TEXT,extra TEXT,created_at TEXT NOT NULL);
CREATE INDEX memories_by_session ON memories(session_id,created_at);
CREATE TABLE summaries(id TEXT PRIMARY KEY,key TEXT NOT NULL UNIQUE,session_id TEXT NOT NULL,project_dir TEXT,prompt_number INTEGER,request TEXT NOT NULL DEFAULT '',investigated TEXT NOT NULL DEFAULT '',learned TEXT NOT NULL DEFAULT '',completed TEXT NOT NULL DEFAULT '',next_steps TEXT NOT NULL DEFAULT '',notes TEXT,files_read TEXT NOT NULL DEFAULT '[]',files_edited TEXT NOT NULL DEFAULT '[]',queue_ids TEXT NOT NULL DEFAULT '[]',origin TEXT NOT NULL CHECK(origin IN('compressor','import')),model TEXT,extra TEXT,created_at TEXT NOT NULL);
CREATE INDEX summaries_by_session ON summaries(session_id,created_at);
CREATE TABLE compress_calls(id TEXT PRIMARY KEY,day TEXT NOT NULL,batch TEXT NOT NULL,items INTEGER NOT NULL,model TEXT,tokens INTEGER NOT NULL,input_tokens INTEGER,output_tokens INTEGER,cache_read_tokens INTEGER,cache_write_tokens INTEGER,cost_usd REAL,estimated INTEGER NOT NULL,outcome TEXT NOT NULL,error TEXT,created_at TEXT NOT NULL,updated_at TEXT NOT NULL);
CREATE INDEX compress_calls_by_day ON compress_calls(day);
CREATE INDEX user_prompts_standing ON user_prompts(created_at)WHERE standing > 0;
CREATE TABLE forgotten(id TEXT PRIMARY KEY,at TEXT NOT NULL)WITHOUT ROWID;
CREATE TABLE project_ids(project_dir TEXT PRIMARY KEY,identity TEXT NOT NULL);
CREATE TABLE project_moves(session_id TEXT PRIMARY KEY,from_dir TEXT NOT NULL,to_dir TEXT NOT NULL,moved_at TEXT NOT NULL);
CREATE TABLE given(session_id TEXT NOT NULL,prompt_id TEXT,giving TEXT NOT NULL,item_id TEXT NOT NULL,item_session TEXT,score REAL,reason TEXT NOT NULL,bytes INTEGER NOT NULL,at TEXT NOT NULL);
CREATE INDEX given_by_session ON given(session_id,prompt_id);
CREATE INDEX given_by_item ON given(item_session,item_id);
INSERT INTO meta (key, value) VALUES ('store_id', lower(hex(randomblob(16))));
