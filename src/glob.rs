//! A tiny glob matcher for directory patterns (`CLAUDE_MEM_EXCLUDE`): `*` is any run of
//! characters within one path component, `?` one such character, `**` any run across
//! components (`/a/**/b` also matches `/a/b`), `~` at the start the home directory. A pattern
//! names a directory and everything below it; one without a leading `/` or `~` matches at any
//! depth (`secret-*` matches `/home/me/work/secret-x`). Linear in the path for each position
//! of the pattern: no backtracking blow-up whatever the pattern.

use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    Char(char),
    /// `?`: one character other than `/`.
    One,
    /// `*`: any run without `/`.
    Star,
    /// `**`: any run, `/` included.
    Any,
    /// `**/`: nothing, or any run that ends with `/`.
    AnyDirs,
}

/// A directory pattern, ready to match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirGlob {
    tokens: Vec<Token>,
}

impl DirGlob {
    /// The pattern `text`, with `~` read as `home`.
    pub fn new(text: &str, home: Option<&Path>) -> DirGlob {
        let text = text.trim();
        let expanded = match (text.strip_prefix('~'), home) {
            (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
                format!("{}{rest}", home.display())
            }
            _ => text.to_string(),
        };
        let anchored = expanded.starts_with('/');
        let mut body = expanded.trim_end_matches('/').to_string();
        if !anchored {
            body = format!("**/{body}");
        }
        let chars: Vec<char> = body.chars().collect();
        let mut tokens = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            let token = match chars[i] {
                '*' if chars.get(i + 1) == Some(&'*') => {
                    i += 1;
                    if chars.get(i + 1) == Some(&'/') {
                        i += 1;
                        Token::AnyDirs
                    } else {
                        Token::Any
                    }
                }
                '*' => Token::Star,
                '?' => Token::One,
                c => Token::Char(c),
            };
            tokens.push(token);
            i += 1;
        }
        DirGlob { tokens }
    }

    /// Whether `dir` is the directory the pattern names or one below it.
    pub fn covers(&self, dir: &str) -> bool {
        let trimmed = dir.trim_end_matches('/');
        let path: Vec<char> = if trimmed.is_empty() { dir } else { trimmed }
            .chars()
            .collect();
        // states[p]: the first p tokens can match what was read so far.
        let n = self.tokens.len();
        let mut states = vec![false; n + 1];
        self.arrive(&mut states, 0);
        for (i, &c) in path.iter().enumerate() {
            let mut next = vec![false; n + 1];
            for p in (0..n).filter(|&p| states[p]) {
                match self.tokens[p] {
                    Token::Char(want) if want == c => self.arrive(&mut next, p + 1),
                    Token::One if c != '/' => self.arrive(&mut next, p + 1),
                    Token::Star if c != '/' => self.arrive(&mut next, p),
                    Token::Any => self.arrive(&mut next, p),
                    // Inside the run, it may only end just after a `/`.
                    Token::AnyDirs => {
                        next[p] = true;
                        if c == '/' {
                            self.arrive(&mut next, p + 1);
                        }
                    }
                    _ => {}
                }
            }
            states = next;
            // A whole match up to a component's end covers everything below.
            if states[n] && path.get(i + 1).is_none_or(|&c| c == '/') {
                return true;
            }
        }
        states[n]
    }

    /// Marks position `p` as reached, and the positions after tokens that may match nothing
    /// from there.
    fn arrive(&self, states: &mut [bool], mut p: usize) {
        states[p] = true;
        while p < self.tokens.len()
            && matches!(self.tokens[p], Token::Star | Token::Any | Token::AnyDirs)
        {
            p += 1;
            states[p] = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn covers(pattern: &str, dir: &str) -> bool {
        DirGlob::new(pattern, Some(Path::new("/home/me"))).covers(dir)
    }

    #[test]
    fn directory_patterns() {
        let yes = [
            ("~/work/secret-*", "/home/me/work/secret-app"),
            ("~/work/secret-*", "/home/me/work/secret-app/src/deep"),
            ("/tmp/*", "/tmp/x"),
            ("/tmp/*", "/tmp/x/y"),
            ("/tmp", "/tmp/"),
            ("/srv/**/private", "/srv/a/b/private"),
            ("/srv/**/private", "/srv/private"),
            ("/srv/app-?", "/srv/app-1"),
            ("secret-*", "/home/me/work/secret-x"),
            ("~", "/home/me/anything"),
            ("/a/**", "/a/b/c"),
        ];
        for (pattern, dir) in yes {
            assert!(covers(pattern, dir), "{pattern} should cover {dir}");
        }
        let no = [
            ("~/work/secret-*", "/home/me/work/public"),
            ("~/work/secret-*", "/home/me/secret-app"),
            ("/tmp/*", "/tmp"),
            ("/tmp/*", "/var/tmp/x"),
            ("/srv/app-?", "/srv/app-10"),
            ("/srv/app", "/srv/application"),
            ("secret-*", "/home/me/notsecret-x"),
            ("/srv/**/private", "/srv/a/privateer"),
        ];
        for (pattern, dir) in no {
            assert!(!covers(pattern, dir), "{pattern} should not cover {dir}");
        }
    }

    #[test]
    fn many_stars_stay_fast() {
        let glob = DirGlob::new(&"*a".repeat(200), None);
        let dir = format!("/{}", "a".repeat(4000));
        let started = std::time::Instant::now();
        assert!(glob.covers(&dir));
        assert!(started.elapsed().as_secs() < 2);
    }
}
