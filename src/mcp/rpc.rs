//! JSON-RPC 2.0 as MCP uses it over stdio: one message per line, requests answered with a
//! result or an error carrying the request's id, notifications never answered, no batches.

use serde_json::{Map, Value, json};

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
/// MCP 2026-07-28: a per-request protocol version the server does not speak.
pub const UNSUPPORTED_VERSION: i64 = -32022;

/// One line from the client, read.
#[derive(Debug, PartialEq)]
pub enum Incoming {
    Request {
        id: Value,
        method: String,
        params: Option<Map<String, Value>>,
    },
    Notification {
        method: String,
    },
    /// An answer to a request of ours: we send none, so it is ignored.
    Response,
    /// Not a message we can serve: answered with this error (`id` null when unknown).
    Invalid {
        id: Value,
        code: i64,
        message: String,
    },
}

pub fn parse(line: &[u8]) -> Incoming {
    let invalid = |id: Value, code, message: &str| Incoming::Invalid {
        id,
        code,
        message: message.to_string(),
    };
    let value: Value = match serde_json::from_slice(line) {
        Ok(value) => value,
        Err(err) => return invalid(Value::Null, PARSE_ERROR, &format!("not JSON: {err}")),
    };
    let Value::Object(mut message) = value else {
        let why = if value.is_array() {
            "batches are not supported: send one message per line"
        } else {
            "a message is a JSON object"
        };
        return invalid(Value::Null, INVALID_REQUEST, why);
    };
    let id = message.remove("id");
    if let Some(id) = &id
        && !(id.is_string() || id.is_i64() || id.is_u64())
    {
        return invalid(
            Value::Null,
            INVALID_REQUEST,
            "an id is a string or an integer",
        );
    }
    let id_or_null = id.clone().unwrap_or(Value::Null);
    if message.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid(id_or_null, INVALID_REQUEST, "jsonrpc must be \"2.0\"");
    }
    let method = match message.remove("method") {
        Some(Value::String(method)) => method,
        Some(_) => return invalid(id_or_null, INVALID_REQUEST, "method must be a string"),
        None if message.contains_key("result") || message.contains_key("error") => {
            return Incoming::Response;
        }
        None => return invalid(id_or_null, INVALID_REQUEST, "a request names a method"),
    };
    let Some(id) = id else {
        return Incoming::Notification { method };
    };
    let params = match message.remove("params") {
        None => None,
        Some(Value::Object(params)) => Some(params),
        Some(_) => return invalid(id, INVALID_PARAMS, "params must be an object"),
    };
    Incoming::Request { id, method, params }
}

/// A result response, as one line.
pub fn result(id: &Value, result: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string()
}

/// An error response, as one line.
pub fn error(id: &Value, code: i64, message: &str, data: Option<Value>) -> String {
    let mut error = json!({"code": code, "message": message});
    if let Some(data) = data {
        error["data"] = data;
    }
    json!({"jsonrpc": "2.0", "id": id, "error": error}).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_requests_notifications_and_what_is_not_either() {
        assert_eq!(
            parse(br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#),
            Incoming::Request {
                id: json!(7),
                method: "ping".into(),
                params: None
            }
        );
        assert_eq!(
            parse(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Incoming::Notification {
                method: "notifications/initialized".into()
            }
        );
        assert_eq!(
            parse(br#"{"jsonrpc":"2.0","id":"a","result":{}}"#),
            Incoming::Response
        );
        let code = |line: &[u8]| match parse(line) {
            Incoming::Invalid { code, .. } => code,
            other => panic!("{other:?}"),
        };
        assert_eq!(code(b"{not json"), PARSE_ERROR);
        assert_eq!(
            code(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#),
            INVALID_REQUEST
        );
        assert_eq!(
            code(br#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#),
            INVALID_REQUEST
        );
        assert_eq!(
            code(br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#),
            INVALID_REQUEST
        );
        assert_eq!(
            code(br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#),
            INVALID_REQUEST
        );
        assert_eq!(
            code(br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}"#),
            INVALID_PARAMS
        );
    }
}
