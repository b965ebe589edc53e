//! What another program changed in a version of the settings file that could not stay in
//! place (a later write of theirs replaced it while ours was being put back), carried into the
//! version we write next, so that neither of their writes is lost.
//!
//! A three-way merge at the level of keys: against the version both started from, every key
//! their version added or changed is set in ours, objects key by key. Keys their version left
//! out are not removed: Claude Code is known to drop keys when it rewrites the file, and a key
//! kept by mistake costs less than one lost.

use serde_json::{Map, Value};

use super::document::Document;

#[derive(Default)]
pub struct Carried(Vec<(Map<String, Value>, Map<String, Value>)>);

impl Carried {
    /// Remembers what `theirs` changed from `base` (file texts); a text that does not parse as
    /// a settings file (half written) is left out.
    pub fn add(&mut self, base: &[u8], theirs: &[u8]) {
        if let (Ok(base), Ok(theirs)) = (Document::parse(base), Document::parse(theirs)) {
            self.0.push((base.root, theirs.root));
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Sets in `root` what each remembered version changed.
    pub fn apply(&self, root: &mut Map<String, Value>) {
        for (base, theirs) in &self.0 {
            changes(root, base, theirs);
        }
    }
}

fn changes(root: &mut Map<String, Value>, base: &Map<String, Value>, theirs: &Map<String, Value>) {
    for (key, value) in theirs {
        let before = base.get(key);
        if before == Some(value) {
            continue;
        }
        match (before, value, root.get_mut(key)) {
            (Some(Value::Object(before)), Value::Object(value), Some(Value::Object(ours))) => {
                changes(ours, before, value);
            }
            _ => {
                root.insert(key.clone(), value.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn their_additions_and_changes_join_ours_and_nothing_is_removed() {
        let base = br#"{"model": "opus", "env": {"A": "1", "B": "2"}, "x": 1}"#;
        let theirs = br#"{"model": "sonnet", "env": {"A": "1", "B": "3"}, "new": true}"#;
        let mut carried = Carried::default();
        carried.add(base, theirs);
        carried.add(base, b"{\"half"); // half a write: nothing to carry
        let mut ours = object(json!({"model": "opus", "env": {"A": "0", "B": "2"}, "x": 1,
                                     "hooks": {"Stop": []}}));
        carried.apply(&mut ours);
        assert_eq!(
            Value::Object(ours),
            json!({"model": "sonnet", "env": {"A": "0", "B": "3"}, "x": 1,
                   "hooks": {"Stop": []}, "new": true})
        );
    }
}
