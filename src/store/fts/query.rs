//! What a user types, as an FTS5 query that cannot be a syntax error.
//!
//! Words, `"quoted phrases"` and prefixes (`merg*`, `"merge sett"*`) are understood; every other
//! character is text. Each term becomes a quoted FTS5 string, inside which FTS5 has no syntax:
//! `foo-bar`, `a:b`, `NOT`, `(` are searched for as written (the tokenizer makes `foo-bar` the
//! phrase "foo bar"), an unbalanced quote runs to the end. All terms must match.

/// The FTS5 expression for `input`, or `None` when it holds nothing to search for.
pub fn parse(input: &str) -> Option<String> {
    let mut terms: Vec<String> = Vec::new();
    let mut chars = input.chars().peekable();
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
            terms.push(format!("\"{}\"{star}", text.replace('"', "\"\"")));
        }
    }
    (!terms.is_empty()).then(|| terms.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_phrases_and_prefixes() {
        assert_eq!(
            parse("merge  settings").as_deref(),
            Some(r#""merge" "settings""#)
        );
        assert_eq!(
            parse(r#""database is locked" merg*"#).as_deref(),
            Some(r#""database is locked" "merg"*"#)
        );
        assert_eq!(
            parse(r#""merge sett"*"#).as_deref(),
            Some(r#""merge sett"*"#)
        );
    }

    #[test]
    fn anything_else_is_text() {
        assert_eq!(parse("foo-bar").as_deref(), Some(r#""foo-bar""#));
        assert_eq!(parse("a:b NOT").as_deref(), Some(r#""a:b" "NOT""#));
        assert_eq!(
            parse(r#""unbalanced words"#).as_deref(),
            Some(r#""unbalanced words""#)
        );
        assert_eq!(parse(r#"say"hi"#).as_deref(), Some(r#""say" "hi""#));
        assert_eq!(parse("- :: * \"\"").as_deref(), None);
        assert_eq!(parse("").as_deref(), None);
    }
}
