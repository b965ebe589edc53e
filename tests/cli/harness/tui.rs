//! A real pseudo-terminal for `browse`: the binary run in a tmux pane of its own server (a
//! socket in the test's folder), keys sent in with `send-keys`, the screen read back with
//! `capture-pane`, polled until what is awaited is there (never a fixed sleep). The pane runs a
//! small script that records the terminal's settings (`stty -g`) before and after the binary
//! and prints its exit code, so that a test sees the terminal as the user gets it back.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use super::{Env, require, wait_until};

/// How long a screen may take to show what a test waits for (a debug build, a busy machine).
const DEADLINE: Duration = Duration::from_secs(30);
/// How often the screen is read again.
const POLL: Duration = Duration::from_millis(20);

/// A tmux server with one pane running `claude-mem browse`; killed when dropped.
pub struct Tui {
    socket: PathBuf,
    dir: PathBuf,
}

/// Whether tmux runs here (`.ci/run` installs it; elsewhere a test without it is skipped).
pub fn require_tmux() -> bool {
    let runs = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    require((!runs).then(|| "no `tmux` on PATH".to_string()))
}

/// `text` quoted for sh.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

impl Tui {
    /// Starts `claude-mem browse <args>` in a `width`x`height` pane, with the test's scrubbed
    /// environment and `vars`.
    pub fn start(env: &Env, args: &[&str], vars: &[(&str, &str)], size: (u16, u16)) -> Tui {
        // A folder (and a server) of its own for each: a test may start several.
        let dir = (0..)
            .map(|n| env.root.path().join(format!("tui{n}")))
            .find(|dir| std::fs::create_dir(dir).is_ok())
            .unwrap();
        let command = env.command();
        let mut line = vec!["env -i TERM=\"$TERM\"".to_string()];
        let set = command
            .get_envs()
            .filter_map(|(k, v)| Some((k.to_str()?.to_string(), v?.to_str()?.to_string())));
        let extra = vars.iter().map(|(k, v)| (k.to_string(), v.to_string()));
        for (key, value) in set.chain(extra) {
            line.push(format!("{key}={}", quoted(&value)));
        }
        line.push(quoted(command.get_program().to_str().unwrap()));
        line.push("browse".into());
        line.extend(args.iter().map(|a| quoted(a)));
        let script = format!(
            "cd {dir}\nstty -g > before.stty\nprintf 'READY\\n'\n{}\necho \"exit=$?\"\n\
             stty -g > after.stty\nexec sleep 600\n",
            line.join(" "),
            dir = quoted(dir.to_str().unwrap()),
        );
        std::fs::write(dir.join("run.sh"), script).unwrap();
        let tui = Tui {
            socket: dir.join("tmux.sock"),
            dir,
        };
        let script = format!("sh {}", quoted(tui.dir.join("run.sh").to_str().unwrap()));
        let (w, h) = (size.0.to_string(), size.1.to_string());
        tui.tmux(&["new-session", "-d", "-x", &w, "-y", &h, &script]);
        tui
    }

    /// Runs `tmux -S <socket> <args>`, which must succeed; its stdout.
    pub fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .env_remove("TMUX")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The screen as text, a line a row.
    pub fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p"])
    }

    /// The screen with its colours and attributes as escape sequences.
    pub fn screen_with_escapes(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-e"])
    }

    /// Polls the screen until `done` holds of it; returns that screen. Fails naming `what`,
    /// with the screen last seen, after a generous deadline.
    pub fn wait(&self, what: &str, done: impl Fn(&str) -> bool) -> String {
        let started = Instant::now();
        loop {
            let screen = self.screen();
            if done(&screen) {
                return screen;
            }
            assert!(
                started.elapsed() < DEADLINE,
                "{what}: not after {DEADLINE:?}; the screen:\n{screen}"
            );
            std::thread::sleep(POLL);
        }
    }

    /// Waits until the screen shows `text`; returns that screen.
    pub fn wait_for(&self, text: &str) -> String {
        self.wait(&format!("the screen to show {text:?}"), |s| {
            s.contains(text)
        })
    }

    /// Sends keys as tmux names them (`Enter`, `Escape`, `Up`, or literal text with `-l`).
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "0"];
        args.extend(keys);
        self.tmux(&args);
    }

    /// Types `text` as it is.
    pub fn type_text(&self, text: &str) {
        self.tmux(&["send-keys", "-t", "0", "-l", text]);
    }

    /// The pane's size changed, as when the user resizes the window.
    pub fn resize(&self, width: u16, height: u16) {
        let (w, h) = (width.to_string(), height.to_string());
        self.tmux(&["resize-window", "-t", "0", "-x", &w, "-y", &h]);
    }

    /// After `browse` ended: its exit code, and whether the terminal's settings are as they
    /// were before it started.
    pub fn ended(&self) -> (i32, bool) {
        let screen = self.wait_for("exit=");
        let code = screen
            .lines()
            .find_map(|l| l.trim().strip_prefix("exit="))
            .unwrap()
            .parse()
            .unwrap();
        let after = self.dir.join("after.stty");
        wait_until(DEADLINE, "the settings after", || {
            std::fs::read_to_string(&after).is_ok_and(|s| !s.is_empty())
        });
        let read = |p: &Path| std::fs::read_to_string(p).unwrap();
        (code, read(&self.dir.join("before.stty")) == read(&after))
    }
}

impl Drop for Tui {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
    }
}
