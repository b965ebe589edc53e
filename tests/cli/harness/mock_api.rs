//! A loopback mock of the Anthropic Messages API, just enough for the real Claude Code CLI to
//! run a scripted session offline: `HEAD /`, `POST /v1/messages` answered with the streaming
//! (SSE) format, every request recorded so a test can see what reached the model.
//!
//! Main turns (requests that offer tools) are answered from a script indexed by the number of
//! assistant messages already in the conversation; side requests (titles, classifiers: no
//! tools) get a short text. Requests for a structured answer (`claude -p --json-schema` offers
//! a `StructuredOutput` tool: the compressor's) have a script of their own, so that a session
//! and a compressor can share one mock. A reply can also be an API error. The server listens
//! on 127.0.0.1 only and stops when dropped or at its deadline, whichever comes first.

use std::io::{self, BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The answer to a side request (a title, a classifier verdict): anything short will do.
const SIDE_ANSWER: &str = "E2E side answer.";
/// A request larger than this is a broken client, not a conversation.
const MAX_BODY: usize = 64 * 1024 * 1024;
/// An idle keep-alive connection is dropped after this.
const IDLE: Duration = Duration::from_secs(30);

/// One scripted assistant message.
#[derive(Debug, Clone)]
pub enum Reply {
    Text(String),
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    /// An API error: this HTTP status, with an `invalid_request_error` of this message.
    Error {
        status: u16,
        message: String,
    },
}

impl Reply {
    /// The structured answer `claude -p --json-schema` asks the model for.
    pub fn structured(answer: Value) -> Reply {
        Reply::ToolUse {
            id: "toolu_structured".into(),
            name: STRUCTURED_TOOL.into(),
            input: answer,
        }
    }
}

/// The tool through which `claude -p --json-schema` takes the model's answer.
pub const STRUCTURED_TOOL: &str = "StructuredOutput";

/// One request as the mock received it.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub path: String,
    /// The body parsed as JSON; `Null` when it was empty or not JSON.
    pub body: Value,
}

impl Request {
    /// A main turn of the conversation, as opposed to a side request: it offers tools.
    pub fn is_main_turn(&self) -> bool {
        self.body["tools"].as_array().is_some_and(|t| !t.is_empty())
    }

    /// A request for a structured answer: it offers the `StructuredOutput` tool.
    pub fn wants_structure(&self) -> bool {
        self.body["tools"]
            .as_array()
            .is_some_and(|tools| tools.iter().any(|t| t["name"] == STRUCTURED_TOOL))
    }

    /// Whether any string anywhere in the body contains every one of `needles`.
    pub fn has_text_with(&self, needles: &[&str]) -> bool {
        fn walk(value: &Value, needles: &[&str]) -> bool {
            match value {
                Value::String(s) => needles.iter().all(|n| s.contains(n)),
                Value::Array(items) => items.iter().any(|v| walk(v, needles)),
                Value::Object(map) => map.values().any(|v| walk(v, needles)),
                _ => false,
            }
        }
        walk(&self.body, needles)
    }
}

struct Shared {
    script: Mutex<Vec<Reply>>,
    structured: Mutex<Vec<Reply>>,
    requests: Mutex<Vec<Request>>,
    messages: AtomicUsize,
    stop: AtomicBool,
    deadline: Instant,
}

pub struct MockApi {
    addr: SocketAddr,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

impl MockApi {
    /// Starts listening on an ephemeral loopback port; serves until dropped or until
    /// `lifetime` has passed.
    pub fn start(lifetime: Duration) -> io::Result<MockApi> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            script: Mutex::new(Vec::new()),
            structured: Mutex::new(Vec::new()),
            requests: Mutex::new(Vec::new()),
            messages: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            deadline: Instant::now() + lifetime,
        });
        let acceptor = {
            let shared = Arc::clone(&shared);
            thread::spawn(move || accept_loop(&listener, &shared))
        };
        Ok(MockApi {
            addr,
            shared,
            acceptor: Some(acceptor),
        })
    }

    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The main-turn answers from now on: reply `n` answers a conversation that already holds
    /// `n` assistant messages; past the end, the last reply repeats.
    pub fn set_script(&self, replies: Vec<Reply>) {
        *self.shared.script.lock().unwrap() = replies;
    }

    /// The answers to requests for a structured answer, indexed as the main script.
    pub fn set_structured(&self, replies: Vec<Reply>) {
        *self.shared.structured.lock().unwrap() = replies;
    }

    /// Every request received so far, in order of arrival.
    pub fn requests(&self) -> Vec<Request> {
        self.shared.requests.lock().unwrap().clone()
    }
}

impl Drop for MockApi {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

impl Shared {
    fn over(&self) -> bool {
        self.stop.load(Ordering::SeqCst) || Instant::now() >= self.deadline
    }
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    while !shared.over() {
        match listener.accept() {
            Ok((stream, _)) => {
                let shared = Arc::clone(shared);
                // Detached: a connection ends when the client closes it, when it idles past
                // IDLE, or at the first request after the deadline.
                thread::spawn(move || {
                    let _ = serve(stream, &shared);
                });
            }
            Err(err) if err.kind() == io::ErrorKind::WouldBlock => {
                thread::sleep(Duration::from_millis(5));
            }
            Err(_) => thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// Serves one connection, keep-alive included: the CLI reuses connections.
fn serve(stream: TcpStream, shared: &Shared) -> io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(IDLE))?;
    let mut writer = stream.try_clone()?;
    let mut reader = BufReader::new(stream);
    while let Some(request) = read_request(&mut reader)? {
        if shared.over() {
            return Ok(());
        }
        let response = respond(&request, shared);
        shared.requests.lock().unwrap().push(request);
        writer.write_all(&response)?;
        writer.flush()?;
    }
    Ok(())
}

/// Reads one HTTP/1.1 request; `None` when the client closed the connection between requests.
pub(super) fn read_request(reader: &mut impl BufRead) -> io::Result<Option<Request>> {
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_string();
    let path = parts.next().unwrap_or_default().to_string();
    let mut content_length = 0usize;
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        let Some((name, value)) = header.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            content_length = value.parse().map_err(|_| bad("bad Content-Length"))?;
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            // The CLI sends Content-Length (2.1.197, 2.1.330): drop the connection rather
            // than misread a body, so the CLI reports an API error in its debug log.
            return Err(bad("the mock does not read chunked request bodies"));
        }
    }
    if content_length > MAX_BODY {
        return Err(bad("body too large"));
    }
    let mut body = vec![0; content_length];
    reader.read_exact(&mut body)?;
    Ok(Some(Request {
        method,
        path,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    }))
}

fn bad(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_string())
}

fn respond(request: &Request, shared: &Shared) -> Vec<u8> {
    let endpoint = request.path.split('?').next().unwrap_or_default();
    if request.method != "POST" || endpoint != "/v1/messages" {
        // `HEAD /` is a connectivity probe; nothing else is needed offline.
        return http("application/json", "{}", request.method != "HEAD");
    }
    let reply = if request.is_main_turn() {
        let turns = request.body["messages"]
            .as_array()
            .map_or(0, |m| m.iter().filter(|m| m["role"] == "assistant").count());
        let script = if request.wants_structure() {
            shared.structured.lock().unwrap()
        } else {
            shared.script.lock().unwrap()
        };
        script
            .get(turns)
            .or(script.last())
            .cloned()
            .unwrap_or_else(|| Reply::Text("(the mock has no script)".into()))
    } else {
        Reply::Text(SIDE_ANSWER.into())
    };
    if let Reply::Error { status, message } = &reply {
        let body = json!({"type": "error",
                          "error": {"type": "invalid_request_error", "message": message}});
        return http_status(*status, "application/json", &body.to_string());
    }
    let id = format!("msg_e2e_{}", shared.messages.fetch_add(1, Ordering::SeqCst));
    let model = request.body["model"].as_str().unwrap_or("claude-e2e-mock");
    // The CLI streams every request it makes (checked with 2.1.197 and 2.1.330).
    http("text/event-stream", &sse(&id, model, &reply), true)
}

pub(super) fn http(content_type: &str, body: &str, with_body: bool) -> Vec<u8> {
    let mut out = head(200, content_type, body.len());
    if with_body {
        out.extend_from_slice(body.as_bytes());
    }
    out
}

fn http_status(status: u16, content_type: &str, body: &str) -> Vec<u8> {
    let mut out = head(status, content_type, body.len());
    out.extend_from_slice(body.as_bytes());
    out
}

fn head(status: u16, content_type: &str, length: usize) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: {content_type}\r\nContent-Length: {length}\r\n\
         Cache-Control: no-cache\r\nrequest-id: req_e2e\r\n\r\n",
        if status == 200 { "OK" } else { "Error" }
    )
    .into_bytes()
}

fn usage() -> Value {
    json!({"input_tokens": 12, "output_tokens": 8, "cache_creation_input_tokens": 0,
           "cache_read_input_tokens": 0})
}

fn stop_reason(reply: &Reply) -> &'static str {
    match reply {
        Reply::ToolUse { .. } => "tool_use",
        _ => "end_turn",
    }
}

/// The reply in the Messages streaming format: one content block.
fn sse(id: &str, model: &str, reply: &Reply) -> String {
    let (start, delta) = match reply {
        Reply::Text(text) => (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": text}),
        ),
        Reply::Error { message, .. } => (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": message}),
        ),
        Reply::ToolUse { id, name, input } => (
            json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
            json!({"type": "input_json_delta", "partial_json": input.to_string()}),
        ),
    };
    let events = [
        json!({"type": "message_start", "message": {"id": id, "type": "message",
               "role": "assistant", "model": model, "content": [], "stop_reason": null,
               "stop_sequence": null, "usage": usage()}}),
        json!({"type": "content_block_start", "index": 0, "content_block": start}),
        json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": stop_reason(reply),
               "stop_sequence": null}, "usage": {"output_tokens": 8}}),
        json!({"type": "message_stop"}),
    ];
    events
        .iter()
        .map(|e| {
            format!(
                "event: {}\ndata: {e}\n\n",
                e["type"].as_str().unwrap_or_default()
            )
        })
        .collect()
}
