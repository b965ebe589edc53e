//! The team's notes in a running MCP server, which indexes them once and keeps the index while
//! they are the same (see `store/read/fts/team.rs`): a note a pull brings is found by the
//! next call, and the notes found before still are.

use serde_json::json;

use super::{Person, git, have_git};
use crate::mcp::Server;

#[test]
fn a_running_mcp_server_finds_the_notes_a_pull_brought() {
    if !have_git() {
        return;
    }
    let alice = Person::with_memories("quokka");
    alice.share();
    alice.commit("share");
    let bob = Person::clone_of(&alice);
    // Bob has a database of his own: the notes are searched beside it.
    bob.record("s-bob", "bobs");
    let mut server = Server::initialized_in(&bob.env, bob.dir());
    let first = server.text("search", json!({"query": "quokkanarrative"}));
    assert!(first.contains("team "), "{first}");
    let before = server.text("search", json!({"query": "zeppelinnarrative"}));
    assert!(!before.contains("zeppelintitle"), "{before}");

    alice.record("s-zeppelin", "zeppelin");
    alice.share();
    alice.commit("share again");
    git(&bob.project, &["pull", "-q", "--ff-only"]);
    let pulled = server.text("search", json!({"query": "zeppelinnarrative"}));
    assert!(
        pulled.contains("team ") && pulled.contains("zeppelintitle"),
        "{pulled}"
    );
    let again = server.text("search", json!({"query": "quokkanarrative"}));
    assert_eq!(again, first);
    let own = server.text("search", json!({"query": "bobsnarrative"}));
    assert!(own.contains("bobstitle") && !own.contains("team "), "{own}");
}
