//! What a user types, as an FTS5 query that cannot be a syntax error, nor take long.
//!
//! Words, `"quoted phrases"` and prefixes (`merg*`, `"merge sett"*`) are understood; every other
//! character is text. Each term becomes a quoted FTS5 string, inside which FTS5 has no syntax:
//! `foo-bar`, `a:b`, `NOT`, `(` are searched for as written (the tokenizer makes `foo-bar` the
//! phrase "foo bar"), an unbalanced quote runs to the end. All terms must match, so a term
//! written twice counts once. A NUL, which would end FTS5's reading of the query, is a space.
//!
//! A query is bounded: ranking and highlighting a row walk FTS5's list of every match of every
//! term, built by looking at each term for each match, so a row costs about the square of the
//! terms times the matches. Measured (release build, interleaved with the build before this
//! bound): on 20,000 rows, 10,000 of them holding `database` 20 times, `database` alone took
//! 0.04 s; 8, 16 and 32 spellings that all match it (`database.`, `(database`, `data*`, …) 0.15,
//! 0.39 and 1.2 s; 20,000 copies of the word did not finish in 10 minutes, the MCP server
//! answering nothing meanwhile.

/// The most terms and characters a query takes: more than anyone types, few enough that the
/// worst of them costs about ten times one word.
pub const MAX_TERMS: usize = 16;
pub const MAX_CHARS: usize = 1_000;

/// The FTS5 expression for `input`; `Ok(None)` when it holds nothing to search for, an error
/// (one line for the user) when it is longer than a query may be.
pub fn parse(input: &str) -> Result<Option<String>, String> {
    let chars = input.chars().count();
    if chars > MAX_CHARS {
        return Err(format!(
            "the query is {} characters long: a search takes at most {} characters and \
             {MAX_TERMS} words",
            crate::text::count(chars as i64),
            crate::text::count(MAX_CHARS as i64)
        ));
    }
    let mut terms: Vec<String> = Vec::new();
    let mut chars = input
        .chars()
        .map(|c| if c == '\0' { ' ' } else { c })
        .peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        let (text, prefix) = if c == '"' {
            chars.next();
            let text: String = chars.by_ref().take_while(|&c| c != '"').collect();
            (text, chars.next_if_eq(&'*').is_some())
        } else {
            let mut word = String::new();
            while let Some(c) = chars.next_if(|&c| !c.is_whitespace() && c != '"') {
                word.push(c);
            }
            let stem = word.trim_end_matches('*');
            (stem.to_string(), stem.len() < word.len())
        };
        // Nothing but punctuation would be an empty phrase, which FTS5 ignores.
        if text.chars().any(char::is_alphanumeric) {
            let star = if prefix { "*" } else { "" };
            let term = format!("\"{}\"{star}", text.replace('"', "\"\""));
            if !terms.contains(&term) {
                terms.push(term);
            }
        }
    }
    if terms.len() > MAX_TERMS {
        return Err(format!(
            "the query has {} different words: a search takes at most {MAX_TERMS}",
            terms.len()
        ));
    }
    Ok((!terms.is_empty()).then(|| terms.join(" ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(input: &str) -> Option<String> {
        parse(input).unwrap()
    }

    #[test]
    fn words_phrases_and_prefixes() {
        assert_eq!(
            query("merge  settings").as_deref(),
            Some(r#""merge" "settings""#)
        );
        assert_eq!(
            query(r#""database is locked" merg*"#).as_deref(),
            Some(r#""database is locked" "merg"*"#)
        );
        assert_eq!(
            query(r#""merge sett"*"#).as_deref(),
            Some(r#""merge sett"*"#)
        );
    }

    #[test]
    fn anything_else_is_text() {
        assert_eq!(query("foo-bar").as_deref(), Some(r#""foo-bar""#));
        assert_eq!(query("a:b NOT").as_deref(), Some(r#""a:b" "NOT""#));
        assert_eq!(
            query(r#""unbalanced words"#).as_deref(),
            Some(r#""unbalanced words""#)
        );
        assert_eq!(query(r#"say"hi"#).as_deref(), Some(r#""say" "hi""#));
        assert_eq!(query("- :: * \"\"").as_deref(), None);
        assert_eq!(query("").as_deref(), None);
    }

    #[test]
    fn a_word_written_twice_counts_once() {
        assert_eq!(
            query("merge Merge merge merge*").as_deref(),
            Some(r#""merge" "Merge" "merge"*"#)
        );
    }

    #[test]
    fn a_nul_is_a_space() {
        assert_eq!(query("mer\0ge").as_deref(), Some(r#""mer" "ge""#));
        assert_eq!(query("\"mer\0ge\"").as_deref(), Some(r#""mer ge""#));
        assert_eq!(query("\0").as_deref(), None);
    }

    #[test]
    fn a_query_is_bounded() {
        let words: Vec<String> = (0..=MAX_TERMS).map(|n| format!("w{n}")).collect();
        let err = parse(&words.join(" ")).unwrap_err();
        assert!(err.contains("17 different words"), "{err}");
        assert!(parse(&words[1..].join(" ")).is_ok());
        let err = parse(&"merge ".repeat(20_000)).unwrap_err();
        assert!(err.contains("120,000 characters"), "{err}");
    }
}
