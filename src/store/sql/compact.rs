//! The schema's text without what SQLite must read past and no one reads: comments, runs of
//! white space, spaces beside parentheses and commas. SQLite keeps each `CREATE` statement as
//! written and parses all of them in every process that opens the database, which is every
//! hook: on the v10 schema, the comments and the aligned columns were 8% of the instructions of
//! a 1 KB capture (callgrind, 2.29 M against 2.11 M).
//!
//! Rewriting `sqlite_schema` in place, under `writable_schema`, is what SQLite documents for
//! changes that leave the file's format as it is (its "ALTER TABLE" page, for constraints and
//! defaults); text outside string literals and quoted names is such a change. A step that
//! fails leaves the schema as it was: it only saves time.

use rusqlite::{Connection, params};

/// Rewrites the text of every object of the schema whose compact text differs; returns how
/// many. Runs inside the migration's transaction.
pub(super) fn compact(tx: &Connection) -> rusqlite::Result<usize> {
    let rows: Vec<(String, String, String)> = {
        let mut stmt = tx.prepare(
            "SELECT type, name, sql FROM sqlite_schema WHERE sql IS NOT NULL ORDER BY rowid",
        )?;
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<rusqlite::Result<_>>()?
    };
    let changed: Vec<(String, String, String)> = rows
        .into_iter()
        .filter_map(|(kind, name, sql)| {
            let short = compacted(&sql);
            (short != sql).then_some((kind, name, short))
        })
        .collect();
    if changed.is_empty() {
        return Ok(0);
    }
    tx.execute_batch("SAVEPOINT compact; PRAGMA writable_schema = ON;")?;
    let done = rewrite(tx, &changed);
    let end = match done {
        Ok(()) => "PRAGMA writable_schema = OFF; RELEASE compact;",
        Err(_) => "PRAGMA writable_schema = OFF; ROLLBACK TO compact; RELEASE compact;",
    };
    tx.execute_batch(end)?;
    done.map(|()| changed.len())
}

/// The new texts, and a new schema version so that every connection reads them again.
fn rewrite(tx: &Connection, changed: &[(String, String, String)]) -> rusqlite::Result<()> {
    let mut update =
        tx.prepare("UPDATE sqlite_schema SET sql = ?3 WHERE type = ?1 AND name = ?2")?;
    for (kind, name, sql) in changed {
        update.execute(params![kind, name, sql])?;
    }
    let version: i64 = tx.query_row("PRAGMA schema_version", [], |r| r.get(0))?;
    tx.execute_batch(&format!("PRAGMA schema_version = {}", version + 1))
}

/// `sql` without comments, with each run of white space one space, and none beside `(`, `)`
/// or `,`; string literals and quoted names (`'…'`, `"…"`, `` `…` ``, `[…]`) as written.
pub(super) fn compacted(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    let mut space = false;
    while let Some(c) = chars.next() {
        let close = match c {
            '\'' | '"' | '`' => Some(c),
            '[' => Some(']'),
            _ => None,
        };
        if let Some(close) = close {
            flush(&mut out, &mut space, c);
            out.push(c);
            // A doubled quote inside is the quote itself: the literal goes on.
            while let Some(inner) = chars.next() {
                out.push(inner);
                if inner == close && (close == ']' || chars.peek() != Some(&close)) {
                    break;
                }
                if inner == close {
                    out.extend(chars.next());
                }
            }
            continue;
        }
        if c == '-' && chars.peek() == Some(&'-') {
            chars.by_ref().find(|&n| n == '\n');
            space = true;
        } else if c == '/' && chars.peek() == Some(&'*') {
            chars.next();
            let mut last = ' ';
            chars
                .by_ref()
                .find(|&n| std::mem::replace(&mut last, n) == '*' && n == '/');
            space = true;
        } else if c.is_whitespace() {
            space = true;
        } else {
            flush(&mut out, &mut space, c);
            out.push(c);
        }
    }
    out
}

/// Writes the one space a run of white space or a comment stands for before `next`, unless
/// it would stand beside a parenthesis or a comma, or at the start.
fn flush(out: &mut String, space: &mut bool, next: char) {
    let beside = |c: char| matches!(c, '(' | ')' | ',');
    if std::mem::take(space) && !out.is_empty() && !out.ends_with(beside) && !beside(next) {
        out.push(' ');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_spaces_go_and_literals_stay() {
        let sql = "CREATE TABLE t (\n    id   TEXT PRIMARY KEY, -- a -- comment\n    kind TEXT \
                   CHECK (kind IN ('a  b', 'it''s -- x')), /* c */ \"odd  name\" INTEGER\n)";
        assert_eq!(
            compacted(sql),
            "CREATE TABLE t(id TEXT PRIMARY KEY,kind TEXT CHECK(kind IN('a  b','it''s -- x')),\
             \"odd  name\" INTEGER)"
        );
        assert_eq!(compacted("SELECT [a  b]  FROM x"), "SELECT [a  b] FROM x");
    }

    /// The schema's texts, in the order SQLite keeps them.
    fn texts(conn: &Connection) -> Vec<String> {
        conn.prepare("SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL ORDER BY rowid")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    }

    #[test]
    fn every_migration_leaves_a_compact_schema_that_works_as_before() {
        let mut conn = Connection::open_in_memory().unwrap();
        let tx = conn.transaction().unwrap();
        for sql in super::super::MIGRATIONS {
            tx.execute_batch(sql).unwrap();
        }
        let before = texts(&tx);
        assert!(compact(&tx).unwrap() > 0);
        assert_eq!(compact(&tx).unwrap(), 0, "compact twice changes nothing");
        let after = texts(&tx);
        assert_eq!(before.len(), after.len());
        for (old, new) in before.iter().zip(&after) {
            assert!(
                !new.contains("--") && !new.contains("  ") && !new.contains('\n'),
                "{new}"
            );
            assert!(new.len() < old.len() || new == old);
        }
        let check: String = tx
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(check, "ok");
        // The constraints still hold (the file has no triggers since v14: see `tombstones`).
        tx.execute(
            "INSERT INTO pending_queue (id, kind, session_id, event, raw_output, created_at,
                 updated_at) VALUES ('q', 'nonsense', 's', 'Stop', '{}', 't', 't')",
            [],
        )
        .unwrap_err();
        tx.execute(
            "INSERT INTO pending_queue (id, session_id, event, raw_output, created_at,
                 updated_at) VALUES ('q', 's', 'Stop', '{}', 't', 't')",
            [],
        )
        .unwrap();
        let triggers: i64 = tx
            .query_row(
                "SELECT COUNT(*) FROM sqlite_schema WHERE type = 'trigger'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(triggers, 0);
    }
}
