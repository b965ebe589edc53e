//! Validation against Claude Code's settings schema (a copy in tests/fixtures), written by hand.
//!
//! A JSON-Schema crate added about 50 s and 75 crates to a clean build on two cores; the schema
//! uses few keywords, so this interprets exactly those. `pattern` is not checked (no regex
//! engine here): the schema uses it only on permission rules, env names, MCP server names,
//! themes and marketplace URLs, never inside `hooks`, which is all install-hooks writes.
//! `format` is an annotation in draft-07. A test fails if the schema starts using a keyword
//! this does not know, so nothing is skipped silently.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

/// Keywords that carry no constraint here.
const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$id",
    "$defs",
    "title",
    "description",
    "markdownDescription",
    "default",
    "examples",
    "deprecated",
    "allowTrailingCommas",
    "format",
    "pattern",
];

/// Keywords this validator checks.
const CHECKED: &[&str] = &[
    "$ref",
    "type",
    "enum",
    "const",
    "properties",
    "additionalProperties",
    "required",
    "propertyNames",
    "items",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "anyOf",
    "oneOf",
    "allOf",
    "not",
];

pub struct Schema {
    root: Value,
}

impl Schema {
    pub fn load() -> Schema {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/claude-code-settings.schema.json"
        );
        let text = std::fs::read_to_string(path).expect("schema copy in tests/fixtures");
        Schema {
            root: serde_json::from_str(&text).expect("schema is JSON"),
        }
    }

    /// Every keyword used anywhere in the schema that this validator does not know.
    pub fn unknown_keywords(&self) -> BTreeSet<String> {
        let mut unknown = BTreeSet::new();
        walk_keywords(&self.root, &mut unknown);
        unknown
    }

    pub fn errors(&self, instance: &Value) -> Vec<String> {
        let mut errors = Vec::new();
        self.check(&self.root, instance, "", &mut errors);
        errors
    }

    fn check(&self, schema: &Value, value: &Value, at: &str, errors: &mut Vec<String>) {
        let Some(schema) = schema.as_object() else {
            if schema == &Value::Bool(false) {
                errors.push(format!("{at}: not allowed here"));
            }
            return;
        };
        if let Some(Value::String(reference)) = schema.get("$ref") {
            let target = self
                .root
                .pointer(reference.trim_start_matches('#'))
                .unwrap_or_else(|| panic!("unresolvable $ref {reference}"));
            let mut inner = Vec::new();
            self.check(target, value, at, &mut inner);
            errors.extend(inner.into_iter().map(|message| format!("{at}: {message}")));
        }
        for message in value_errors(schema, value) {
            errors.push(format!("{at}: {message}"));
        }
        if let Some(object) = value.as_object() {
            self.check_object(schema, object, at, errors);
        }
        if let Some(items) = value.as_array() {
            self.check_array(schema, items, at, errors);
        }
        self.check_combinations(schema, value, at, errors);
    }

    /// `required`, and each key against `propertyNames` and its schema in `properties`, or
    /// else `additionalProperties`.
    fn check_object(
        &self,
        schema: &Map<String, Value>,
        object: &Map<String, Value>,
        at: &str,
        errors: &mut Vec<String>,
    ) {
        if let Some(Value::Array(required)) = schema.get("required") {
            for key in required.iter().filter_map(Value::as_str) {
                if !object.contains_key(key) {
                    errors.push(format!("{at}: missing required key {key:?}"));
                }
            }
        }
        let properties = schema.get("properties").and_then(Value::as_object);
        for (key, child) in object {
            let path = format!("{at}/{key}");
            if let Some(names) = schema.get("propertyNames") {
                self.check(names, &Value::String(key.clone()), &path, errors);
            }
            match (
                properties.and_then(|p| p.get(key)),
                schema.get("additionalProperties"),
            ) {
                (Some(sub), _) => self.check(sub, child, &path, errors),
                (None, Some(additional)) => self.check(additional, child, &path, errors),
                (None, None) => {}
            }
        }
    }

    /// Each item against `items`, then `minItems`, `maxItems` and `uniqueItems`.
    fn check_array(
        &self,
        schema: &Map<String, Value>,
        items: &[Value],
        at: &str,
        errors: &mut Vec<String>,
    ) {
        if let Some(sub) = schema.get("items") {
            for (i, item) in items.iter().enumerate() {
                self.check(sub, item, &format!("{at}/{i}"), errors);
            }
        }
        let count = items.len() as u64;
        if schema
            .get("minItems")
            .and_then(Value::as_u64)
            .is_some_and(|m| count < m)
            || schema
                .get("maxItems")
                .and_then(Value::as_u64)
                .is_some_and(|m| count > m)
        {
            errors.push(format!("{at}: {count} items is out of range"));
        }
        if schema.get("uniqueItems") == Some(&Value::Bool(true))
            && items
                .iter()
                .enumerate()
                .any(|(i, x)| items[..i].contains(x))
        {
            errors.push(format!("{at}: items are not unique"));
        }
    }

    /// `allOf`, `anyOf`, `oneOf` and `not`.
    fn check_combinations(
        &self,
        schema: &Map<String, Value>,
        value: &Value,
        at: &str,
        errors: &mut Vec<String>,
    ) {
        let passes = |sub: &Value| {
            let mut inner = Vec::new();
            self.check(sub, value, at, &mut inner);
            inner.is_empty()
        };
        if let Some(Value::Array(subs)) = schema.get("allOf") {
            for sub in subs {
                self.check(sub, value, at, errors);
            }
        }
        if let Some(Value::Array(subs)) = schema.get("anyOf")
            && !subs.iter().any(passes)
        {
            errors.push(format!("{at}: matches none of anyOf for {value}"));
        }
        if let Some(Value::Array(subs)) = schema.get("oneOf")
            && subs.iter().filter(|s| passes(s)).count() != 1
        {
            errors.push(format!("{at}: does not match exactly one of oneOf"));
        }
        if let Some(sub) = schema.get("not")
            && passes(sub)
        {
            errors.push(format!("{at}: matches a `not` schema"));
        }
    }
}

/// What `value` itself breaks of `schema` (`type`, `enum`, `const`, the lengths of a string,
/// the range of a number), each said without its place.
fn value_errors(schema: &Map<String, Value>, value: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    if let Some(types) = schema.get("type") {
        let types: Vec<&str> = match types {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        if !types.iter().any(|t| has_type(value, t)) {
            errors.push(format!("expected {types:?}, found {value}"));
        }
    }
    if let Some(Value::Array(allowed)) = schema.get("enum")
        && !allowed.contains(value)
    {
        errors.push(format!("{value} is not one of {allowed:?}"));
    }
    if let Some(constant) = schema.get("const")
        && constant != value
    {
        errors.push(format!("{value} is not {constant}"));
    }
    if let (Some(s), Some(min)) = (value.as_str(), schema.get("minLength"))
        && (s.chars().count() as u64) < min.as_u64().unwrap_or(0)
    {
        errors.push(format!("{value} is shorter than {min}"));
    }
    if let (Some(s), Some(max)) = (value.as_str(), schema.get("maxLength"))
        && s.chars().count() as u64 > max.as_u64().unwrap_or(u64::MAX)
    {
        errors.push(format!("{value} is longer than {max}"));
    }
    if let Some(n) = value.as_f64() {
        let bound = |key: &str| schema.get(key).and_then(Value::as_f64);
        if bound("minimum").is_some_and(|m| n < m)
            || bound("maximum").is_some_and(|m| n > m)
            || bound("exclusiveMinimum").is_some_and(|m| n <= m)
            || bound("exclusiveMaximum").is_some_and(|m| n >= m)
        {
            errors.push(format!("{n} is out of range"));
        }
    }
    errors
}

fn has_type(value: &Value, t: &str) -> bool {
    match t {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        "number" => value.is_number(),
        "integer" => {
            value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|n| n.fract() == 0.0)
        }
        _ => panic!("unknown type {t}"),
    }
}

/// Collects keywords of every schema object, descending only where the value is a schema.
fn walk_keywords(schema: &Value, unknown: &mut BTreeSet<String>) {
    let Some(object) = schema.as_object() else {
        return;
    };
    for (key, value) in object {
        if !ANNOTATIONS.contains(&key.as_str()) && !CHECKED.contains(&key.as_str()) {
            unknown.insert(key.clone());
        }
        match key.as_str() {
            "properties" | "$defs" => {
                for sub in value.as_object().into_iter().flat_map(|m| m.values()) {
                    walk_keywords(sub, unknown);
                }
            }
            // Only the single-schema form of `items` is checked; flag the tuple form.
            "items" if value.is_array() => {
                unknown.insert("items (tuple form)".into());
            }
            "items" | "additionalProperties" | "propertyNames" | "not" => {
                walk_keywords(value, unknown)
            }
            "anyOf" | "oneOf" | "allOf" => {
                for sub in value.as_array().into_iter().flatten() {
                    walk_keywords(sub, unknown);
                }
            }
            _ => {}
        }
    }
}
