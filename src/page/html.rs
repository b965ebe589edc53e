//! The page itself: one HTML file that needs nothing but itself. Its style and script are
//! inline (`page.css`, `page.js`), allowed by a Content-Security-Policy that names them by a
//! nonce made for this file and forbids everything else, so the page can make no request at
//! all: no font, image, script or connection, whatever the data holds. The data is JSON in
//! `<script type="application/json">` elements, which never run, with every `<` written
//! `\u003c` so that no text can close the element; the script builds the page from it with
//! `textContent`, never as HTML.

use std::io::Write;

use anyhow::Result;
use rusqlite::Connection;
use serde::Serialize;

use super::model::{Gather, Shown};
use crate::store::export::{self, Counts, Filter};

const STYLE: &str = include_str!("page.css");
const SCRIPT: &str = include_str!("page.js");

/// What the page says of itself, above the sessions.
#[derive(Serialize)]
struct About<'a> {
    title: &'a str,
    exported_at: Option<String>,
    claude_mem: Option<String>,
    project: Option<&'a str>,
    since: Option<&'a str>,
    until: Option<&'a str>,
}

/// Writes the page of every record `filter` selects (as `export` selects them) to `out`.
pub fn page(conn: &Connection, filter: &Filter, out: &mut dyn Write) -> Result<Counts> {
    let nonce = nonce()?;
    let header = export::header(filter)?;
    let title = match &filter.project {
        Some(project) => format!("claude-mem: {project}"),
        None => "claude-mem: all projects".to_string(),
    };
    let about = About {
        title: &title,
        exported_at: header.exported_at,
        claude_mem: header.claude_mem,
        project: filter.project.as_deref(),
        since: filter.since.as_deref(),
        until: filter.until.as_deref(),
    };
    write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; base-uri 'none'; \
         form-action 'none'\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"referrer\" content=\"no-referrer\">\n\
         <title>{}</title>\n<style nonce=\"{nonce}\">\n{STYLE}</style>\n</head>\n<body>\n\
         <noscript><p>This page shows the memory with its own inline script, which fetches \
         nothing: allow JavaScript for this file to read it.</p></noscript>\n\
         <header>\n<h1 id=\"title\">{}</h1>\n<p id=\"made\"></p>\n\
         <input id=\"search\" type=\"search\" placeholder=\"Search (press /)\" \
         aria-label=\"Search the memory\" autocomplete=\"off\" spellcheck=\"false\" autofocus>\n\
         <p id=\"status\" role=\"status\"></p>\n</header>\n<main id=\"results\"></main>\n\
         <button id=\"more\" type=\"button\" hidden>Show more sessions</button>\n\
         <script id=\"about\" type=\"application/json\">",
        escape(&title),
        escape(&title)
    )?;
    json(out, &about)?;
    out.write_all(b"</script>\n<script id=\"sessions\" type=\"application/json\">[")?;
    let counts = sessions(conn, filter, out)?;
    write!(
        out,
        "]</script>\n<script nonce=\"{nonce}\">\n{SCRIPT}</script>\n</body>\n</html>\n"
    )?;
    Ok(counts)
}

/// The sessions as a JSON array's items, each written as soon as its records are read.
fn sessions(conn: &Connection, filter: &Filter, out: &mut dyn Write) -> Result<Counts> {
    let mut gather = Gather::default();
    let mut first = true;
    let mut put = |out: &mut dyn Write, shown: Shown| -> Result<()> {
        if !std::mem::take(&mut first) {
            out.write_all(b",\n")?;
        }
        json(out, &shown)
    };
    let counts = export::each_record(conn, filter, &mut |record| match gather.take(record) {
        Some(done) => put(out, done),
        None => Ok(()),
    })?;
    if let Some(done) = gather.finish() {
        put(out, done)?;
    }
    Ok(counts)
}

/// `value` as JSON that cannot end the `<script>` element it is in.
fn json(out: &mut dyn Write, value: &impl Serialize) -> Result<()> {
    let text = serde_json::to_string(value)?;
    out.write_all(text.replace('<', "\\u003c").as_bytes())?;
    Ok(())
}

/// `text` as HTML text or an attribute's value.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A nonce no text in the data can know: 128 random bits, as hex (a subset of CSP's base64).
fn nonce() -> Result<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)
        .map_err(|err| anyhow::anyhow!("no random numbers from the system: {err}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_text_can_close_the_data_element_or_become_markup() {
        let mut out = Vec::new();
        json(&mut out, &"</script><script>alert(1)</script><!--").unwrap();
        let written = String::from_utf8(out).unwrap();
        assert!(!written.contains('<'), "{written}");
        let back: String = serde_json::from_str(&written).unwrap();
        assert_eq!(back, "</script><script>alert(1)</script><!--");
        assert_eq!(
            escape("<b>\"a\" & 'b'</b>"),
            "&lt;b&gt;&quot;a&quot; &amp; &#39;b&#39;&lt;/b&gt;"
        );
    }
}
