//! A loopback stand-in of OpenAI's Responses API, just enough for the real Codex and Copilot
//! CLIs to run a turn offline (a model provider pointed at it, the Responses wire API): `POST
//! /v1/responses` answered as a stream of `response.created`, one `response.output_item.done`
//! and `response.completed` with the output again and its `usage`. The first request of a turn
//! gets a `function_call` to `exec_command` running `command` (or to another agent's shell
//! tool, see [`MockResponses::calling`]); once the request holds that call's output, a
//! `message`. It speaks Google's Gemini API the same way for the Gemini CLI
//! ([`MockResponses::gemini_calling`]): `POST /v1beta/models/<model>:streamGenerateContent?alt=sse`
//! answered with one event of a `functionCall`, then, once the request holds its
//! `functionResponse`, of the answer's text. Every request is recorded, so that a test sees
//! what reached the model. Listens on 127.0.0.1 only and stops when dropped.
//!
//! It also speaks the Chat Completions API (`POST /v1/chat/completions`, streamed), for
//! OpenCode's OpenAI-compatible provider: a `tool_calls` delta, or once the request holds the
//! call's `tool` message, the answer; a request that offers no tools (a title) gets the answer.

use std::io::{self, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use serde_json::{Value, json};

use super::mock_api::{Request, http, read_request};

/// What the model says once the command ran.
pub const ANSWER: &str = "Done: the command ran.";

/// The API the stand-in speaks.
#[derive(Clone, Copy, PartialEq)]
enum Wire {
    Responses,
    Gemini,
}

struct Shared {
    wire: Wire,
    /// The shell tool's name and its call's arguments.
    tool: String,
    arguments: Value,
    requests: Mutex<Vec<Request>>,
    stop: AtomicBool,
}

pub struct MockResponses {
    addr: SocketAddr,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

impl MockResponses {
    /// Serves until dropped; each turn runs the shell `command` once, through Codex's
    /// `exec_command`.
    pub fn start(command: &str) -> io::Result<MockResponses> {
        MockResponses::calling("exec_command", &json!({"cmd": command}))
    }

    /// Serves until dropped; each turn calls the agent's `tool` once with `arguments`.
    pub fn calling(tool: &str, arguments: &Value) -> io::Result<MockResponses> {
        MockResponses::serve(Wire::Responses, tool, arguments)
    }

    /// Serves Gemini's API until dropped; each turn calls the Gemini CLI's `tool` once with
    /// `arguments`.
    pub fn gemini_calling(tool: &str, arguments: &Value) -> io::Result<MockResponses> {
        MockResponses::serve(Wire::Gemini, tool, arguments)
    }

    fn serve(wire: Wire, tool: &str, arguments: &Value) -> io::Result<MockResponses> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            wire,
            tool: tool.to_string(),
            arguments: arguments.clone(),
            requests: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
        });
        let acceptor = {
            let shared = Arc::clone(&shared);
            // Blocks in accept; the drop wakes it with a connection of its own.
            thread::spawn(move || {
                for stream in listener.incoming() {
                    if shared.stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let shared = Arc::clone(&shared);
                    thread::spawn(move || {
                        let _ = serve(stream, &shared);
                    });
                }
            })
        };
        Ok(MockResponses {
            addr,
            shared,
            acceptor: Some(acceptor),
        })
    }

    /// The `base_url` of a model provider that uses this stand-in.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The stand-in's address as Gemini's SDK takes it (`GOOGLE_GEMINI_BASE_URL`): it adds
    /// the API's version itself.
    pub fn origin(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The bodies of the requests for a response, in order of arrival; emptied.
    pub fn take_requests(&self) -> Vec<Value> {
        std::mem::take(&mut *self.shared.requests.lock().unwrap())
            .into_iter()
            .filter(|r| r.method == "POST")
            .map(|r| r.body)
            .collect()
    }
}

impl Drop for MockResponses {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

fn serve(stream: TcpStream, shared: &Shared) -> io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut writer = stream.try_clone()?;
    let mut reader = BufReader::new(stream);
    while let Some(request) = read_request(&mut reader)? {
        let response = if request.method == "POST" && shared.wire == Wire::Gemini {
            gemini_reply(&request, shared)
        } else if request.method == "POST" && request.path.ends_with("/chat/completions") {
            http(
                "text/event-stream",
                &chat_stream_of(&request.body, shared),
                true,
            )
        } else if request.method == "POST" {
            http("text/event-stream", &stream_of(&request.body, shared), true)
        } else {
            http(
                "application/json",
                "{\"object\":\"list\",\"data\":[]}",
                true,
            )
        };
        shared.requests.lock().unwrap().push(request);
        writer.write_all(&response)?;
        writer.flush()?;
    }
    Ok(())
}

/// The events of one response: the command to run, or the answer once it ran.
fn stream_of(body: &Value, shared: &Shared) -> String {
    let ran = body["input"]
        .as_array()
        .is_some_and(|items| items.iter().any(|i| i["type"] == "function_call_output"));
    let item = if ran {
        json!({"type": "message", "role": "assistant", "id": "msg_e2e", "status": "completed",
               "content": [{"type": "output_text", "text": ANSWER, "annotations": []}]})
    } else {
        json!({"type": "function_call", "id": "fc_e2e", "call_id": "call_e2e",
               "name": shared.tool, "arguments": shared.arguments.to_string(),
               "status": "completed"})
    };
    let usage = json!({"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                       "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                       "total_tokens": 15});
    [
        json!({"type": "response.created", "response": {"id": "resp_e2e"}}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        // Copilot reads the response's output and status from this event alone.
        json!({"type": "response.completed", "response": {"id": "resp_e2e", "status": "completed",
               "output": [item], "usage": usage}}),
    ]
    .iter()
    .map(|e| {
        format!(
            "event: {}\ndata: {e}\n\n",
            e["type"].as_str().unwrap_or_default()
        )
    })
    .collect()
}

/// Gemini's answer to one request: the call to run, or the answer once it ran; streamed as one
/// server-sent event when asked (`alt=sse`), else one JSON object (`generateContent`).
fn gemini_reply(request: &Request, shared: &Shared) -> Vec<u8> {
    let ran = request.body["contents"].as_array().is_some_and(|contents| {
        contents.iter().any(|content| {
            content["parts"]
                .as_array()
                .is_some_and(|parts| parts.iter().any(|p| p.get("functionResponse").is_some()))
        })
    });
    let part = if ran {
        json!({"text": ANSWER})
    } else {
        json!({"functionCall": {"name": shared.tool, "args": shared.arguments}})
    };
    let reply = json!({
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP",
                        "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5,
                          "totalTokenCount": 15}});
    if request.path.contains("alt=sse") {
        http("text/event-stream", &format!("data: {reply}\n\n"), true)
    } else {
        http("application/json", &reply.to_string(), true)
    }
}

/// The chunks of one streamed chat completion: the tool call, or the answer once it ran (or
/// when the request offers no tools).
fn chat_stream_of(body: &Value, shared: &Shared) -> String {
    let has = |key: &str, want: &str| {
        body[key]
            .as_array()
            .is_some_and(|items| items.iter().any(|i| i["role"] == want || i["type"] == want))
    };
    let (delta, finish) = if has("tools", "function") && !has("messages", "tool") {
        let call = json!({"index": 0, "id": "call_e2e", "type": "function",
                          "function": {"name": shared.tool, "arguments": shared.arguments.to_string()}});
        (
            json!({"role": "assistant", "tool_calls": [call]}),
            "tool_calls",
        )
    } else {
        (json!({"role": "assistant", "content": ANSWER}), "stop")
    };
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "chatcmpl_e2e", "object": "chat.completion.chunk", "created": 1,
               "model": "e2e-model", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
               "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
    };
    [chunk(delta, Value::Null), chunk(json!({}), json!(finish))]
        .iter()
        .map(|c| format!("data: {c}\n\n"))
        .chain(std::iter::once("data: [DONE]\n\n".to_string()))
        .collect()
}
