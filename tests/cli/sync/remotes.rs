//! What the user names as the remote, handed to git: a remote git would read as an option or
//! run as a program is refused before git sees it, and a token in an https URL reaches the host
//! through git's credential helper, never a command line, `status`, `status.json` or a line
//! printed. The host here is `git http-backend` behind a small HTTP server of the test's own
//! that asks for Basic authentication and records what it was given.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use super::*;

#[test]
fn a_remote_git_would_read_as_an_option_or_run_as_a_program_is_refused_and_nothing_runs() {
    if !require_program("git") {
        return;
    }
    let env = machine();
    let marker = env.tmp().join("ran");
    for remote in [
        format!("--upload-pack=touch {}", marker.display()),
        format!("ext::sh -c touch% {}", marker.display()),
    ] {
        let out = run(&env, &["sync", "setup", "--", &remote]);
        assert!(!marker.exists(), "{remote} ran a program");
        let err = failed(&out, 1);
        assert!(err.contains("a remote cannot"), "{remote}: {err}");
        assert!(!env.data_dir.join("sync/remote.json").exists());
    }
}

/// A user name and password as Basic authentication gives them.
fn basic(user: &str, password: &str) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let bytes = format!("{user}:{password}").into_bytes();
    let mut out = String::from("Basic ");
    for group in bytes.chunks(3) {
        let n = group
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            out.push(if i <= group.len() {
                ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char
            } else {
                '='
            });
        }
    }
    out
}

/// Serves the bare repositories under `root` over smart HTTP to requests that bring
/// `expected` as their Authorization (a 401 asking for it otherwise); records each request's
/// Authorization.
fn serve(root: PathBuf, expected: String) -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            answer(stream, &root, &expected, &record);
        }
    });
    (port, seen)
}

fn answer(mut stream: TcpStream, root: &Path, expected: &str, seen: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request = String::new();
    reader.read_line(&mut request).unwrap();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap() == 0 || line == "\r\n" {
            break;
        }
        let (name, value) = line.split_once(':').unwrap();
        headers.push((name.to_ascii_lowercase(), value.trim().to_string()));
    }
    let header = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    let mut body = vec![0; header("content-length").map_or(0, |l| l.parse().unwrap())];
    reader.read_exact(&mut body).unwrap();
    let auth = header("authorization").unwrap_or_default();
    seen.lock().unwrap().push(auth.clone());
    if auth != expected {
        let _ = stream.write_all(
            b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"test\"\r\n\
              Content-Length: 0\r\nConnection: close\r\n\r\n",
        );
        return;
    }
    let mut parts = request.split(' ');
    let (method, target) = (parts.next().unwrap(), parts.next().unwrap());
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let mut cgi = Command::new("git");
    cgi.arg("http-backend")
        .env("GIT_PROJECT_ROOT", root)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("REMOTE_USER", "someone")
        .env("REQUEST_METHOD", method)
        .env("PATH_INFO", path)
        .env("QUERY_STRING", query)
        .env("CONTENT_LENGTH", body.len().to_string())
        .env("CONTENT_TYPE", header("content-type").unwrap_or_default());
    if let Some(encoding) = header("content-encoding") {
        cgi.env("HTTP_CONTENT_ENCODING", encoding);
    }
    let out = run_with_input(&mut cgi, &body);
    let split = out
        .stdout
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap();
    let head = String::from_utf8_lossy(&out.stdout[..split]).into_owned();
    let status = head
        .lines()
        .find_map(|l| l.strip_prefix("Status: "))
        .unwrap_or("200 OK");
    let kept: String = head
        .lines()
        .filter(|l| !l.starts_with("Status:"))
        .map(|l| format!("{l}\r\n"))
        .collect();
    let content = &out.stdout[split + 4..];
    let _ = stream.write_all(
        format!(
            "HTTP/1.1 {status}\r\n{kept}Content-Length: {}\r\nConnection: close\r\n\r\n",
            content.len()
        )
        .as_bytes(),
    );
    let _ = stream.write_all(content);
}

/// A `git` on PATH that logs its command line, then runs the real one.
fn logging_git(env: &Env) -> (String, PathBuf) {
    let real = Command::new("sh")
        .args(["-c", "command -v git"])
        .output()
        .unwrap();
    let real = String::from_utf8(real.stdout).unwrap().trim().to_string();
    let bin = env.tmp().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = env.tmp().join("git-argv.log");
    write_program(
        &bin.join("git"),
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{}'\nexec '{real}' \"$@\"\n",
            log.display()
        ),
    );
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    (path, log)
}

#[test]
fn a_token_in_an_https_remote_reaches_the_host_through_git_and_is_shown_nowhere() {
    if !require_program("git") {
        return;
    }
    let remote = Remote::new();
    let secret = "tok3n-S3cret-value";
    let (port, seen) = serve(remote.dir.path().to_path_buf(), basic("alice", secret));
    let url = format!("http://alice:{secret}@127.0.0.1:{port}/memory.git");
    let shown = format!("http://127.0.0.1:{port}/memory.git");
    let plain = machine();
    let (path, log) = logging_git(&plain);
    let a = plain.with("PATH", &path);
    session(
        &a,
        "aaaaaaaa-0000-4000-8000-000000000001",
        PROJECT,
        &["alpha"],
    );
    let said = ok(&run(&a, &["sync", "setup", &url]));
    assert!(said.contains(&shown) && !said.contains(secret), "{said}");
    let said = sync(&a);
    assert!(said.contains("Sent 1 session"), "{said}");
    // The host was given the token, by git.
    assert!(seen.lock().unwrap().contains(&basic("alice", secret)));
    // Nowhere else: not on a command line, nor in what is shown or kept in the clear.
    let argv = std::fs::read_to_string(&log).unwrap();
    assert!(argv.contains("fetch") && !argv.contains(secret), "{argv}");
    for args in [
        &["status"][..],
        &["sync", "status"],
        &["sync", "status", "--json"],
    ] {
        let out = ok(&run(&a, args));
        assert!(
            out.contains(&shown) && !out.contains(secret),
            "{args:?}: {out}"
        );
    }
    for file in ["remote.json", "status.json"] {
        let text = std::fs::read_to_string(a.data_dir.join("sync").join(file)).unwrap();
        assert!(!text.contains(secret), "{file}: {text}");
    }
    let off = ok(&run(&a, &["sync", "off"]));
    assert!(!off.contains(secret), "{off}");
    assert!(!a.data_dir.join("sync/credential").exists());
}
