//! The terms the search index makes of a text, outside any table: SQLite's `porter` stemmer
//! over our `cmem` tokenizer (`tokenize = 'porter cmem'`), called through FTS5's own API, each
//! term with its place in the text. Per-prompt recall weighs the team's notes by these terms
//! (see `team::digest`), so that a note matches a prompt's word exactly when the index would
//! match it in one of our own items.

use std::ffi::{c_char, c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;

use anyhow::{Result, bail};
use rusqlite::{Connection, ffi};

/// What is called with each term, its byte range in the text, and whether it is colocated with
/// the term before (at its position: a compound word whole, a CJK pair).
type Each<'a> = dyn FnMut(&str, usize, usize, bool) + 'a;

/// The index's tokenizer, made once and run on any number of texts.
pub struct Stemmer<'c> {
    /// The tokenizer's methods, as FTS5 found them.
    methods: ffi::fts5_tokenizer,
    instance: *mut ffi::Fts5Tokenizer,
    /// The connection whose FTS5 made the tokenizer: it must outlive it.
    _conn: Conn<'c>,
}

/// A connection of the stemmer's own, or one it is lent.
enum Conn<'c> {
    Own(Connection),
    Lent(&'c Connection),
}

impl Conn<'_> {
    fn get(&self) -> &Connection {
        match self {
            Conn::Own(conn) => conn,
            Conn::Lent(conn) => conn,
        }
    }
}

impl Stemmer<'static> {
    /// The stemmer, on a connection of its own in memory.
    pub fn new() -> Result<Stemmer<'static>> {
        let conn = Connection::open_in_memory()?;
        super::tokenizer::register(&conn)?;
        Stemmer::make(Conn::Own(conn))
    }
}

impl<'c> Stemmer<'c> {
    /// The stemmer, on `conn`, where the tokenizer is registered (the search index's): one
    /// fewer connection to open.
    pub fn on(conn: &'c Connection) -> Result<Stemmer<'c>> {
        Stemmer::make(Conn::Lent(conn))
    }

    fn make(conn: Conn<'c>) -> Result<Stemmer<'c>> {
        // SAFETY: the API belongs to `conn`, which the stemmer keeps; FTS5 fills `methods`
        // and `user_data` and makes `instance`, which `drop` deletes before `conn` closes.
        unsafe {
            let api = super::tokenizer::fts5_api(conn.get().handle())?;
            let Some(find) = (*api).xFindTokenizer else {
                bail!("this SQLite's FTS5 cannot find tokenizers");
            };
            let mut user_data = ptr::null_mut();
            let mut methods: ffi::fts5_tokenizer = std::mem::zeroed();
            if find(api, c"porter".as_ptr(), &mut user_data, &mut methods) != ffi::SQLITE_OK {
                bail!("this SQLite's FTS5 has no porter stemmer");
            }
            let Some(create) = methods.xCreate else {
                bail!("this SQLite's porter stemmer cannot be made");
            };
            let mut args = [c"cmem".as_ptr()];
            let mut instance = ptr::null_mut();
            let rc = create(user_data, args.as_mut_ptr(), 1, &mut instance);
            if rc != ffi::SQLITE_OK || instance.is_null() {
                bail!("cannot make the search index's stemmer (SQLite error {rc})");
            }
            Ok(Stemmer {
                methods,
                instance,
                _conn: conn,
            })
        }
    }

    /// Calls `each(term, start, end, colocated)` for each term of `text` (byte offsets into it), as the
    /// index makes them of a document, or of a query's words (`query`: a compound word's parts
    /// only, see `tokenizer`).
    pub fn each(&self, text: &str, query: bool, each: &mut Each) -> Result<()> {
        let Some(tokenize) = self.methods.xTokenize else {
            bail!("the search index's stemmer cannot tokenize");
        };
        if text.is_empty() {
            return Ok(());
        }
        let Ok(len) = c_int::try_from(text.len()) else {
            bail!("a text of {} bytes is too long to tokenize", text.len());
        };
        let flags = match query {
            true => ffi::FTS5_TOKENIZE_QUERY,
            false => ffi::FTS5_TOKENIZE_DOCUMENT,
        };
        let mut each: &mut Each = each;
        // SAFETY: `instance` is alive (dropped only with the stemmer); `text` is `len` bytes
        // that live for the call; `ctx` points at `each`, which outlives the call, and
        // `term` reads it back as that type.
        let rc = unsafe {
            tokenize(
                self.instance,
                (&raw mut each).cast::<c_void>(),
                flags,
                text.as_ptr().cast::<c_char>(),
                len,
                Some(term),
            )
        };
        if rc != ffi::SQLITE_OK {
            bail!("the search index's stemmer failed (SQLite error {rc})");
        }
        Ok(())
    }

    /// The distinct terms of `text`, sorted.
    pub fn terms(&self, text: &str, query: bool) -> Result<Vec<String>> {
        let mut terms = Vec::new();
        self.each(text, query, &mut |term, _, _, _| {
            terms.push(term.to_string())
        })?;
        terms.sort_unstable();
        terms.dedup();
        Ok(terms)
    }
}

impl Drop for Stemmer<'_> {
    fn drop(&mut self) {
        if let Some(delete) = self.methods.xDelete {
            // SAFETY: made by this tokenizer's `xCreate`, deleted once.
            unsafe { delete(self.instance) };
        }
    }
}

/// The callback FTS5 calls with each term: hands it to the `Each` that `ctx` points at.
unsafe extern "C" fn term(
    ctx: *mut c_void,
    flags: c_int,
    token: *const c_char,
    len: c_int,
    start: c_int,
    end: c_int,
) -> c_int {
    // A panic must not unwind into C.
    catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: `ctx` is the `&mut Each` that `Stemmer::each` passed, alive for its call;
        // `token` is `len` bytes that live for this one.
        unsafe {
            let each = &mut *ctx.cast::<&mut Each>();
            let bytes = std::slice::from_raw_parts(token.cast::<u8>(), len.max(0) as usize);
            if let Ok(term) = std::str::from_utf8(bytes) {
                let colocated = flags & ffi::FTS5_TOKEN_COLOCATED != 0;
                each(term, start.max(0) as usize, end.max(0) as usize, colocated);
            }
        }
        ffi::SQLITE_OK
    }))
    .unwrap_or(ffi::SQLITE_ERROR)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_are_stemmed_as_the_index_stems_them() {
        let stemmer = Stemmer::new().unwrap();
        assert_eq!(
            stemmer
                .terms("Binding ports: upsertSession tests", false)
                .unwrap(),
            ["bind", "port", "session", "test", "upsert", "upsertsess"]
        );
        assert_eq!(
            stemmer.terms("upsertSession", true).unwrap(),
            ["session", "upsert"]
        );
        let mut places = Vec::new();
        stemmer
            .each(
                "the upsertSession",
                false,
                &mut |term, start, end, colocated| {
                    places.push((term.to_string(), start, end, colocated));
                },
            )
            .unwrap();
        assert_eq!(
            places,
            [
                ("the".into(), 0, 3, false),
                ("upsert".into(), 4, 10, false),
                ("upsertsess".into(), 4, 17, true),
                ("session".into(), 10, 17, false)
            ]
        );
    }

    /// What the index holds of a text is what the stemmer says of it: a word of a prompt
    /// matches a note as it would match an item of the index.
    #[test]
    fn the_stemmer_agrees_with_the_index() {
        let conn = Connection::open_in_memory().unwrap();
        super::super::tokenizer::register(&conn).unwrap();
        conn.execute_batch(
            "CREATE VIRTUAL TABLE fts USING fts5(body, tokenize = 'porter cmem');
             CREATE VIRTUAL TABLE terms USING fts5vocab(fts, 'row');",
        )
        .unwrap();
        let text = "Gunicorn binds 0.0.0.0:8000; merge-settings retried, Café 日本語";
        conn.execute("INSERT INTO fts VALUES (?1)", [text]).unwrap();
        let mut stmt = conn
            .prepare("SELECT term FROM terms ORDER BY term")
            .unwrap();
        let indexed: Vec<String> = stmt
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let stemmer = Stemmer::new().unwrap();
        assert_eq!(stemmer.terms(text, false).unwrap(), indexed);
    }
}
