//! Which MCP revision a request speaks, and the answer when it is one we do not.
//!
//! Two eras: the current revision (2026-07-28) carries its version and the client's
//! capabilities in every request's `_meta` and has no handshake; the earlier ones (2025-11-25
//! and before) open with `initialize`, which picks one version for the connection. A server may
//! serve both ("dual-era"), deciding by how each request is shaped: that is what this one does,
//! as Claude Code (2.1.330) still opens with `initialize` unless configured otherwise.

use serde_json::{Map, Value, json};

/// The revisions with per-request metadata, newest first.
pub const MODERN: &[&str] = &["2026-07-28"];
/// The revisions with an `initialize` handshake, newest first.
pub const LEGACY: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

pub const VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
pub const CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
pub const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// How a request is to be served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Era {
    /// Per-request metadata naming a revision we speak.
    Modern,
    /// No per-request version: the connection's `initialize` decided (or it is `initialize`).
    Legacy,
}

/// Why a request cannot be served in any era.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// A per-request version we do not speak: the client should retry with one of ours.
    Unsupported { requested: String },
    /// Per-request metadata without what it must carry.
    Malformed(String),
}

impl Refusal {
    /// The JSON-RPC error object.
    pub fn error(&self) -> (i64, String, Option<Value>) {
        match self {
            Refusal::Unsupported { requested } => (
                super::rpc::UNSUPPORTED_VERSION,
                "Unsupported protocol version".into(),
                Some(json!({"supported": supported(), "requested": requested})),
            ),
            Refusal::Malformed(why) => (super::rpc::INVALID_PARAMS, why.clone(), None),
        }
    }
}

/// Every revision we speak, newest first.
pub fn supported() -> Vec<&'static str> {
    MODERN.iter().chain(LEGACY).copied().collect()
}

/// The era of a request, from its `params._meta`.
pub fn era(params: Option<&Map<String, Value>>) -> Result<Era, Refusal> {
    let meta = params
        .and_then(|p| p.get("_meta"))
        .and_then(Value::as_object);
    let Some(version) = meta.and_then(|m| m.get(VERSION_KEY)) else {
        return Ok(Era::Legacy);
    };
    let Some(version) = version.as_str() else {
        return Err(Refusal::Malformed(format!(
            "{VERSION_KEY} must be a string"
        )));
    };
    if !MODERN.contains(&version) {
        return Err(Refusal::Unsupported {
            requested: version.to_string(),
        });
    }
    if !meta.is_some_and(|m| m.get(CAPABILITIES_KEY).is_some_and(Value::is_object)) {
        return Err(Refusal::Malformed(format!(
            "a request of protocol version {version} must carry {CAPABILITIES_KEY} in _meta"
        )));
    }
    Ok(Era::Modern)
}

/// The version `initialize` answers: the one asked for when we speak it, else our newest
/// handshake version (the client then decides whether it can go on).
pub fn negotiate(requested: &str) -> &'static str {
    LEGACY
        .iter()
        .find(|v| **v == requested)
        .copied()
        .unwrap_or(LEGACY[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(meta: Value) -> Map<String, Value> {
        json!({"_meta": meta}).as_object().unwrap().clone()
    }

    #[test]
    fn a_request_is_modern_only_with_a_version_we_speak_and_its_capabilities() {
        assert_eq!(era(None), Ok(Era::Legacy));
        assert_eq!(era(Some(&params(json!({})))), Ok(Era::Legacy));
        let modern = params(json!({VERSION_KEY: "2026-07-28", CAPABILITIES_KEY: {}}));
        assert_eq!(era(Some(&modern)), Ok(Era::Modern));
        let future = params(json!({VERSION_KEY: "2099-01-01", CAPABILITIES_KEY: {}}));
        assert_eq!(
            era(Some(&future)),
            Err(Refusal::Unsupported {
                requested: "2099-01-01".into()
            })
        );
        let bare = params(json!({VERSION_KEY: "2026-07-28"}));
        assert!(matches!(era(Some(&bare)), Err(Refusal::Malformed(_))));
    }

    #[test]
    fn initialize_answers_the_version_asked_for_or_our_newest() {
        assert_eq!(negotiate("2025-06-18"), "2025-06-18");
        assert_eq!(negotiate("2024-11-05"), "2024-11-05");
        assert_eq!(negotiate("2025-11-25"), "2025-11-25");
        assert_eq!(negotiate("2026-07-28"), "2025-11-25");
        assert_eq!(negotiate("1999-01-01"), "2025-11-25");
    }
}
