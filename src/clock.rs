//! Timestamps and ids, in the one format the database uses: ISO-8601 UTC text that sorts as it
//! reads, and UUID v7 ids that sort by creation time.

use chrono::{SecondsFormat, Utc};

pub fn now() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true)
}

pub fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}
