//! The Model Context Protocol over stdio: the small protocol layer `claude-mem mcp` serves its
//! tools through. The protocol knows nothing of the memory: a [`Handler`] supplies the tools,
//! and [`memory::Memory`] is ours.
//!
//! Written here rather than taken from the official Rust SDK (rmcp 3.11, which does speak
//! both eras): linked into this binary, the SDK and the async runtime it needs (tokio) made the
//! binary 3.3 MB larger (5.4 to 8.7 MB, 60 % more relocations to apply at every start), and a
//! no-op hook 0.07 ms slower (1.26 to 1.33 ms median, 1,500 interleaved runs), about 6 % of a
//! hook's whole run, on the path every tool call of Claude Code pays for; it also needs Rust
//! 1.88. What is needed here is four methods on one thread: a few hundred lines.
//!
//! One message per line on stdin, one answer per line on stdout, in order; a request is served
//! whole before the next line is read. The server ends when stdin ends (the client closed it or
//! died) or stdout can no longer be written.

pub mod memory;
pub mod rpc;
pub mod version;

use std::io::{self, BufRead};
use std::panic::{self, AssertUnwindSafe};

use serde_json::{Map, Value, json};

use crate::text::find;
use rpc::Incoming;
use version::Era;

/// A longer line is refused (and skipped) rather than held in memory.
const MAX_LINE: usize = 16 << 20;
/// How long a client may keep the tool list and our identity (they change with the binary).
const CACHE_TTL_MS: u64 = 3_600_000;

/// One tool as `tools/list` describes it.
pub struct Tool {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    /// A JSON Schema object for the arguments.
    pub input_schema: Value,
}

/// What a tool call answers: text for the model, and whether it is an error the model should
/// read (a bad argument, an unknown id) rather than a result.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    pub text: String,
    pub is_error: bool,
}

/// The tools a server offers.
pub trait Handler {
    fn name(&self) -> &'static str;
    fn version(&self) -> &'static str;
    /// What the model is told about the server as a whole.
    fn instructions(&self) -> &'static str;
    fn tools(&self) -> Vec<Tool>;
    /// `None` when no tool has that name.
    fn call(&self, name: &str, arguments: &Map<String, Value>) -> Option<ToolOutput>;
}

/// Serves `input` until it ends, answering through `send` (one message, without its newline).
pub fn serve(
    input: &mut impl BufRead,
    send: &mut impl FnMut(&str) -> io::Result<()>,
    handler: &impl Handler,
) -> io::Result<()> {
    let mut server = Server {
        handler,
        handshake: None,
    };
    while let Some(line) = read_line(input, MAX_LINE)? {
        let answer = match line {
            Line::TooLong => Some(rpc::error(
                &Value::Null,
                rpc::INVALID_REQUEST,
                &format!("a message is at most {MAX_LINE} bytes"),
                None,
            )),
            Line::Text(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => None,
            Line::Text(bytes) => server.handle(&bytes),
        };
        if let Some(answer) = answer
            && send(&answer).is_err()
        {
            // The client no longer reads: nobody is left to serve.
            return Ok(());
        }
    }
    Ok(())
}

struct Server<'h, H> {
    handler: &'h H,
    /// The version `initialize` agreed on, for requests without per-request metadata.
    handshake: Option<&'static str>,
}

/// A method's answer before it becomes a response: a result, or an error code and message.
type Answer = Result<Value, (i64, String)>;

impl<H: Handler> Server<'_, H> {
    fn handle(&mut self, line: &[u8]) -> Option<String> {
        match rpc::parse(line) {
            Incoming::Request { id, method, params } => {
                Some(self.request(&id, &method, params.as_ref()))
            }
            Incoming::Notification { .. } | Incoming::Response => None,
            Incoming::Invalid { id, code, message } => Some(rpc::error(&id, code, &message, None)),
        }
    }

    fn request(&mut self, id: &Value, method: &str, params: Option<&Map<String, Value>>) -> String {
        let era = match version::era(params) {
            Ok(era) => era,
            Err(refusal) => {
                let (code, message, data) = refusal.error();
                return rpc::error(id, code, &message, data);
            }
        };
        let answer = match (method, &era) {
            ("initialize", _) => self.initialize(params),
            ("server/discover", Era::Modern) => Ok(self.discover()),
            ("server/discover", Era::Legacy) => Err((
                rpc::INVALID_PARAMS,
                format!("server/discover needs {} in _meta", version::VERSION_KEY),
            )),
            ("ping", _) => Ok(json!({})),
            ("tools/list", _) => Ok(self.tool_list(&era)),
            ("tools/call", _) => self.call(params),
            _ => Err((rpc::METHOD_NOT_FOUND, format!("no method {method:?}"))),
        };
        match answer {
            Ok(mut result) => {
                if era == Era::Modern {
                    result["resultType"] = json!("complete");
                    result["_meta"] = json!({version::SERVER_INFO_KEY: self.server_info()});
                }
                rpc::result(id, result)
            }
            Err((code, message)) => rpc::error(id, code, &message, None),
        }
    }

    fn server_info(&self) -> Value {
        json!({"name": self.handler.name(), "version": self.handler.version()})
    }

    fn initialize(&mut self, params: Option<&Map<String, Value>>) -> Answer {
        let requested = params
            .and_then(|p| p.get("protocolVersion"))
            .and_then(Value::as_str)
            .ok_or_else(|| {
                (
                    rpc::INVALID_PARAMS,
                    format!(
                        "initialize needs protocolVersion; this server speaks {}",
                        version::supported().join(", ")
                    ),
                )
            })?;
        let agreed = version::negotiate(requested);
        self.handshake = Some(agreed);
        Ok(json!({
            "protocolVersion": agreed,
            "capabilities": {"tools": {"listChanged": false}},
            "serverInfo": self.server_info(),
            "instructions": self.handler.instructions(),
        }))
    }

    fn discover(&self) -> Value {
        json!({
            "supportedVersions": version::supported(),
            "capabilities": {"tools": {"listChanged": false}},
            "instructions": self.handler.instructions(),
            "ttlMs": CACHE_TTL_MS,
            "cacheScope": "public",
        })
    }

    fn tool_list(&self, era: &Era) -> Value {
        // Titles and annotations came with 2025-06-18 and 2025-03-26: an older client is
        // handed only what it knows.
        let since =
            |revision: &str| *era == Era::Modern || self.handshake.is_none_or(|v| v >= revision);
        let tools: Vec<Value> = self
            .handler
            .tools()
            .into_iter()
            .map(|tool| {
                let mut value = json!({
                    "name": tool.name,
                    "description": tool.description,
                    "inputSchema": tool.input_schema,
                });
                if since("2025-06-18") {
                    value["title"] = json!(tool.title);
                }
                if since("2025-03-26") {
                    value["annotations"] = json!({"readOnlyHint": true, "openWorldHint": false});
                }
                value
            })
            .collect();
        let mut list = json!({"tools": tools});
        if *era == Era::Modern {
            list["ttlMs"] = json!(CACHE_TTL_MS);
            list["cacheScope"] = json!("public");
        }
        list
    }

    fn call(&self, params: Option<&Map<String, Value>>) -> Answer {
        let bad = |why: &str| (rpc::INVALID_PARAMS, why.to_string());
        let params = params.ok_or_else(|| bad("tools/call needs params with a tool name"))?;
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("tools/call needs the tool's name"))?;
        let empty = Map::new();
        let arguments = match params.get("arguments") {
            None | Some(Value::Null) => &empty,
            Some(Value::Object(arguments)) => arguments,
            Some(_) => return Err(bad("the arguments of a tool call are an object")),
        };
        let called = panic::catch_unwind(AssertUnwindSafe(|| self.handler.call(name, arguments)));
        match called {
            Ok(Some(output)) => Ok(json!({
                "content": [{"type": "text", "text": output.text}],
                "isError": output.is_error,
            })),
            Ok(None) => Err(bad(&format!(
                "unknown tool {name:?}; the tools are {}",
                self.handler
                    .tools()
                    .iter()
                    .map(|t| t.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
            Err(_) => Err((
                rpc::INTERNAL_ERROR,
                format!("the tool {name} failed unexpectedly; the log has the details"),
            )),
        }
    }
}

enum Line {
    Text(Vec<u8>),
    TooLong,
}

/// The next line without its end, `None` at the end of input. A line longer than `max` is read
/// to its end and dropped.
fn read_line(input: &mut impl BufRead, max: usize) -> io::Result<Option<Line>> {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let buffer = match input.fill_buf() {
            Ok(buffer) => buffer,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        if buffer.is_empty() {
            return Ok(match (line.is_empty() && !too_long, too_long) {
                (true, _) => None,
                (false, true) => Some(Line::TooLong),
                (false, false) => Some(Line::Text(line)),
            });
        }
        let (chunk, done) = match find::byte(b'\n', buffer) {
            Some(end) => (&buffer[..end], end + 1),
            None => (buffer, buffer.len()),
        };
        let ended = done > chunk.len();
        if !too_long {
            if line.len() + chunk.len() > max {
                too_long = true;
                line = Vec::new();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        input.consume(done);
        if ended {
            return Ok(Some(if too_long {
                Line::TooLong
            } else {
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                Line::Text(line)
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Echo;

    impl Handler for Echo {
        fn name(&self) -> &'static str {
            "echo"
        }
        fn version(&self) -> &'static str {
            "1.0.0"
        }
        fn instructions(&self) -> &'static str {
            "Echoes."
        }
        fn tools(&self) -> Vec<Tool> {
            vec![Tool {
                name: "echo",
                title: "Echo",
                description: "Says it back.",
                input_schema: json!({"type": "object"}),
            }]
        }
        fn call(&self, name: &str, arguments: &Map<String, Value>) -> Option<ToolOutput> {
            if arguments.contains_key("boom") {
                panic!("boom");
            }
            (name == "echo").then(|| ToolOutput {
                text: Value::Object(arguments.clone()).to_string(),
                is_error: false,
            })
        }
    }

    fn exchange(lines: &[&str]) -> Vec<Value> {
        let input = lines.join("\n");
        let mut out = Vec::new();
        serve(
            &mut input.as_bytes(),
            &mut |line: &str| {
                out.push(serde_json::from_str(line).unwrap());
                Ok(())
            },
            &Echo,
        )
        .unwrap();
        out
    }

    #[test]
    fn serves_a_legacy_session_in_order() {
        let out = exchange(&[
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            "",
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"a":1}}}"#,
        ]);
        assert_eq!(out.len(), 3, "{out:?}");
        assert_eq!(out[0]["result"]["protocolVersion"], "2025-03-26");
        assert_eq!(out[0]["result"]["instructions"], "Echoes.");
        let tool = &out[1]["result"]["tools"][0];
        assert_eq!(tool["name"], "echo");
        assert!(tool.get("title").is_none(), "2025-03-26 has no titles");
        assert_eq!(tool["annotations"]["readOnlyHint"], true);
        assert!(out[1]["result"].get("resultType").is_none());
        assert_eq!(
            out[2]["result"],
            json!({"content": [{"type": "text", "text": "{\"a\":1}"}], "isError": false})
        );
    }

    #[test]
    fn serves_a_modern_request_without_a_handshake() {
        let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
        let out = exchange(&[
            &format!(
                r#"{{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{{{meta}}}}}"#
            ),
            &format!(r#"{{"jsonrpc":"2.0","id":"l","method":"tools/list","params":{{{meta}}}}}"#),
            r#"{"jsonrpc":"2.0","id":"x","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
        ]);
        assert_eq!(out[0]["result"]["supportedVersions"][0], "2026-07-28");
        assert_eq!(out[0]["result"]["resultType"], "complete");
        assert_eq!(
            out[0]["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
            "echo"
        );
        assert_eq!(out[1]["result"]["tools"][0]["title"], "Echo");
        assert_eq!(out[1]["result"]["cacheScope"], "public");
        assert_eq!(out[2]["error"]["code"], rpc::UNSUPPORTED_VERSION);
        assert_eq!(out[2]["error"]["data"]["requested"], "2099-01-01");
    }

    #[test]
    fn errors_name_what_was_wrong_and_the_server_goes_on() {
        let out = exchange(&[
            r#"{"jsonrpc":"2.0","id":1,"method":"resources/list"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"boom":1}}}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"initialize","params":{}}"#,
            "{oops",
            r#"{"jsonrpc":"2.0","id":6,"method":"ping"}"#,
        ]);
        let codes: Vec<Value> = out.iter().map(|o| o["error"]["code"].clone()).collect();
        assert_eq!(
            codes,
            [
                json!(rpc::METHOD_NOT_FOUND),
                json!(rpc::INVALID_PARAMS),
                json!(rpc::INVALID_PARAMS),
                json!(rpc::INTERNAL_ERROR),
                json!(rpc::INVALID_PARAMS),
                json!(rpc::PARSE_ERROR),
                Value::Null
            ]
        );
        assert_eq!(out[6]["result"], json!({}));
        assert!(
            out[1]["error"]["message"]
                .as_str()
                .unwrap()
                .contains("the tools are echo")
        );
    }

    #[test]
    fn a_line_past_the_limit_is_dropped_and_the_next_one_read() {
        let long = "x".repeat(100);
        let input = format!("{long}\nshort\r\n\nend");
        let mut reader = input.as_bytes();
        let mut lines = Vec::new();
        while let Some(line) = read_line(&mut reader, 10).unwrap() {
            lines.push(match line {
                Line::TooLong => "(too long)".to_string(),
                Line::Text(t) => String::from_utf8(t).unwrap(),
            });
        }
        assert_eq!(lines, ["(too long)", "short", "", "end"]);
    }
}
