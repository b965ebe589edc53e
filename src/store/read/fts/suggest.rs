//! "Did you mean": when nothing matches, the stored word nearest to each word searched for.
//!
//! The index's own list of terms (FTS5's `fts5vocab`) is read for the terms that start with the
//! word's first letter and are about as long; the nearest by edit distance (a swap of two
//! letters counts one), among those the most common, is the suggestion. The index holds stems
//! (`deploy` is `deploi`), so the word as it was written is read back from a document that
//! holds it. Only ever run when a search found nothing.

use anyhow::Result;
use rusqlite::{OptionalExtension, params};

use super::tokenizer::each_token;
use super::{Index, Query};

/// Words shorter than this are not guessed at: too many words are one letter from them.
const MIN_CHARS: usize = 4;

impl Index {
    /// The query with each word that has a near stored word replaced by it (and the others
    /// left out); `None` when no word has one.
    pub fn suggest(&self, query: &Query) -> Result<Option<String>> {
        let mut words = Vec::new();
        for word in &query.words {
            if let Some(near) = self.nearest(word)? {
                words.push(near);
            }
        }
        Ok((!words.is_empty()).then(|| words.join(" ")))
    }

    fn nearest(&self, word: &str) -> Result<Option<String>> {
        let chars: Vec<char> = word.chars().collect();
        if chars.len() < MIN_CHARS || word.contains(' ') || !chars.iter().all(|c| c.is_alphabetic())
        {
            return Ok(None);
        }
        self.conn.execute_batch(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab USING fts5vocab(main, fts, row);
             CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab_at
                 USING fts5vocab(main, fts, instance);",
        )?;
        let first = chars[0];
        let after = char::from_u32(first as u32 + 1).unwrap_or(char::MAX);
        let most = allowed(chars.len());
        let mut best: Option<(usize, i64, String)> = None;
        let mut stmt = self.conn.prepare_cached(
            "SELECT term, doc FROM temp.vocab
              WHERE term >= ?1 AND term < ?2 AND length(term) BETWEEN ?3 AND ?4",
        )?;
        let mut rows = stmt.query(params![
            first.to_string(),
            after.to_string(),
            chars.len().saturating_sub(most) as i64,
            (chars.len() + most) as i64
        ])?;
        while let Some(row) = rows.next()? {
            let term: String = row.get(0)?;
            let docs: i64 = row.get(1)?;
            let distance = distance(&chars, &term.chars().collect::<Vec<_>>());
            if distance == 0 || distance > most {
                continue;
            }
            if best
                .as_ref()
                .is_none_or(|(d, n, _)| distance < *d || (distance == *d && docs > *n))
            {
                best = Some((distance, docs, term));
            }
        }
        let Some((_, _, term)) = best else {
            return Ok(None);
        };
        Ok(Some(self.as_written(&term)?.unwrap_or(term)))
    }

    /// The word a stored term was made from, as a document holds it (lower case, folded).
    fn as_written(&self, term: &str) -> Result<Option<String>> {
        let Some((doc, column, offset)) = self
            .conn
            .query_row(
                "SELECT doc, col, offset FROM temp.vocab_at WHERE term = ?1 LIMIT 1",
                [term],
                |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, i64>(2)?,
                    ))
                },
            )
            .optional()?
        else {
            return Ok(None);
        };
        let column = if column == "head" { "head" } else { "body" };
        let text: String = self.conn.query_row(
            &format!("SELECT {column} FROM fts WHERE rowid = ?1"),
            [doc],
            |r| r.get(0),
        )?;
        let target: Vec<char> = term.chars().collect();
        let mut at = -1;
        let mut found: Option<(usize, String)> = None;
        each_token(&text, false, &mut |token, _, _, colocated| {
            if !colocated {
                at += 1;
            }
            if at == offset {
                let d = distance(&target, &token.chars().collect::<Vec<_>>());
                if found.as_ref().is_none_or(|(best, _)| d < *best) {
                    found = Some((d, token.to_string()));
                }
            }
            at <= offset
        });
        Ok(found.map(|(_, word)| word))
    }
}

/// The edits a word of `len` characters may be from the one suggested.
fn allowed(len: usize) -> usize {
    match len {
        0..=4 => 1,
        5..=8 => 2,
        _ => 3,
    }
}

/// Edits (insert, delete, replace, swap two neighbours) from `a` to `b`.
fn distance(a: &[char], b: &[char]) -> usize {
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    rows[0] = (0..=b.len()).collect();
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = d;
        }
    }
    rows[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_swap_is_one_edit() {
        let d = |a: &str, b: &str| {
            distance(
                &a.chars().collect::<Vec<_>>(),
                &b.chars().collect::<Vec<_>>(),
            )
        };
        assert_eq!(d("delpoy", "deploy"), 1);
        assert_eq!(d("delpoy", "deploi"), 2);
        assert_eq!(d("kitten", "sitting"), 3);
        assert_eq!(d("", "abc"), 3);
    }
}
