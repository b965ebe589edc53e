//! The command string of our handlers: how we write it and how we recognise it.
//!
//! Claude Code strips unknown keys from hook entries when it rewrites settings.json, so the
//! command string is the only identity that survives: `<any dir>/claude-mem hook <name>`,
//! the program quoted or not. Claude Code runs it with `sh -c` on Unix and Git Bash on Windows;
//! both take a double-quoted path, and Git Bash mangles backslashes, so Windows paths are
//! written with forward slashes.

use std::path::Path;

use anyhow::{Result, anyhow};

/// This binary's absolute path, as our handlers name it.
pub struct Program {
    /// Quoted for the shell: the start of a shell-form command line.
    pub shell: String,
    /// As is: the `command` of an exec-form handler (`args` given), which no shell reads.
    pub exec: String,
}

impl Program {
    pub fn of(exe: &Path) -> Result<Program> {
        let path = exe.to_str().ok_or_else(|| {
            anyhow!(
                "the path of this binary is not UTF-8 and cannot be written into settings.json: {}",
                exe.display()
            )
        })?;
        Ok(Program {
            shell: quote(path, cfg!(windows)),
            exec: if cfg!(windows) {
                git_bash_path(path)
            } else {
                path.to_string()
            },
        })
    }
}

fn quote(path: &str, windows: bool) -> String {
    let path = if windows {
        git_bash_path(path)
    } else {
        path.to_string()
    };
    let mut quoted = String::with_capacity(path.len() + 2);
    quoted.push('"');
    for c in path.chars() {
        // Inside double quotes sh still expands these four; a backslash makes them literal.
        if matches!(c, '"' | '\\' | '$' | '`') {
            quoted.push('\\');
        }
        quoted.push(c);
    }
    quoted.push('"');
    quoted
}

/// `C:\Users\x\claude-mem.exe` -> `C:/Users/x/claude-mem.exe`, dropping the `\\?\` prefix that
/// canonical Windows paths carry.
fn git_bash_path(path: &str) -> String {
    let path = match path.strip_prefix(r"\\?\UNC\") {
        Some(rest) => format!(r"\\{rest}"),
        None => path.strip_prefix(r"\\?\").unwrap_or(path).to_string(),
    };
    path.replace('\\', "/")
}

/// A command line of ours, as found in a settings file.
pub struct Ours<'a> {
    /// Byte offsets where the program word starts and ends: what surrounds it (an environment
    /// prefix such as `CLAUDE_MEM_DEBUG=1`, the arguments) is kept when the path changes.
    pub program_start: usize,
    pub program_end: usize,
    /// The hook name after `hook` (may be empty).
    pub hook: &'a str,
}

/// Recognises `<dir>/claude-mem hook <name>...` (also `claude-mem.exe`, quoted or not, and
/// after `NAME=value` assignments, the way a user sets one of our variables for a hook).
pub fn parse_ours(command: &str) -> Option<Ours<'_>> {
    let skip_space = |at: usize| at + command[at..].len() - command[at..].trim_start().len();
    let mut program_start = skip_space(0);
    let (program, program_end) = loop {
        let (word, end) = first_word(command, program_start)?;
        if !is_assignment(&word) || end == program_start {
            break (word, end);
        }
        program_start = skip_space(end);
    };
    if !is_our_program(&program) {
        return None;
    }
    let rest = &command[program_end..];
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let mut words = rest.split_whitespace();
    if words.next()? != "hook" {
        return None;
    }
    let hook = words.next().unwrap_or("");
    let hook = hook
        .split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_'))
        .next()
        .unwrap_or("");
    Some(Ours {
        program_start,
        program_end,
        hook,
    })
}

/// Whether a program path names claude-mem (`claude-mem.exe` too), from whatever directory.
pub fn is_our_program(path: &str) -> bool {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    name == "claude-mem" || name.eq_ignore_ascii_case("claude-mem.exe")
}

/// `NAME=value`, as sh reads it before a command.
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// The first shell word from `start`, unquoted, and the offset where it ends. Unquoted
/// backslashes are kept: they are path separators in the Windows commands other tools write.
fn first_word(s: &str, start: usize) -> Option<(String, usize)> {
    let mut word = String::new();
    let mut chars = s[start..].char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            c if c.is_whitespace() || matches!(c, ';' | '&' | '|' | '<' | '>' | '(' | ')') => {
                return Some((word, start + i));
            }
            '\'' => loop {
                match chars.next()? {
                    (_, '\'') => break,
                    (_, c) => word.push(c),
                }
            },
            '"' => loop {
                match chars.next()? {
                    (_, '"') => break,
                    (_, '\\') => {
                        let (_, next) = chars.next()?;
                        if !matches!(next, '"' | '\\' | '$' | '`' | '\n') {
                            word.push('\\');
                        }
                        word.push(next);
                    }
                    (_, c) => word.push(c),
                }
            },
            c => word.push(c),
        }
    }
    Some((word, s.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_our_command_lines_only() {
        let ours = [
            (r#""/usr/local/bin/claude-mem" hook capture"#, "capture"),
            ("/home/u/.cargo/bin/claude-mem hook capture", "capture"),
            (
                "CLAUDE_MEM_DEBUG=1 /usr/bin/claude-mem hook cleanup",
                "cleanup",
            ),
            ("C:/Users/x/claude-mem.exe hook capture", "capture"),
            (r#""C:\Users\x\claude-mem.exe" hook context"#, "context"),
            (r"C:\Users\x\Claude-Mem.EXE hook stop", "stop"),
            (
                "'/opt/my dir/claude-mem' hook summary 2>/dev/null",
                "summary",
            ),
            (r#""/a \"b\"/claude-mem" hook prompt"#, "prompt"),
            ("  claude-mem hook cleanup", "cleanup"),
            ("claude-mem hook", ""),
        ];
        for (command, hook) in ours {
            let found = parse_ours(command).map(|o| o.hook);
            assert_eq!(found, Some(hook), "{command}");
        }
        let theirs = [
            "other-tool hook x",
            "claude-mem-extra hook context",
            "/usr/bin/claude-mem-extra hook context",
            "claude-mem status",
            "claude-mem;hook context",
            "claude-memhook context",
            "echo claude-mem hook context",
            "\"/unterminated/claude-mem hook context",
            "",
        ];
        for command in theirs {
            assert!(parse_ours(command).is_none(), "{command}");
        }
    }

    #[test]
    fn quotes_for_sh_and_for_git_bash() {
        assert_eq!(
            quote("/usr/local/bin/claude-mem", false),
            r#""/usr/local/bin/claude-mem""#
        );
        assert_eq!(
            quote("/home/a b/$x`y`\"z\\/claude-mem", false),
            r#""/home/a b/\$x\`y\`\"z\\/claude-mem""#
        );
        assert_eq!(
            quote(r"C:\Users\J Doe\bin\claude-mem.exe", true),
            r#""C:/Users/J Doe/bin/claude-mem.exe""#
        );
        assert_eq!(
            quote(r"\\?\C:\tools\claude-mem.exe", true),
            r#""C:/tools/claude-mem.exe""#
        );
        assert_eq!(
            quote(r"\\?\UNC\server\share\claude-mem.exe", true),
            r#""//server/share/claude-mem.exe""#
        );
    }

    #[test]
    fn what_we_write_is_what_we_recognise() {
        for path in [
            "/usr/bin/claude-mem",
            "/a b/$c/claude-mem",
            r"C:\x y\claude-mem.exe",
        ] {
            for windows in [false, true] {
                let command = format!("{} hook capture", quote(path, windows));
                let ours = parse_ours(&command).expect("our own command line");
                assert_eq!(ours.hook, "capture");
                assert_eq!(&command[ours.program_end..], " hook capture");
            }
        }
    }
}
