//! A host that rolls the branch back to before a forget: what a machine knows was deleted
//! never comes back, whether it syncs on or leaves and joins again in that window.

use super::*;

#[test]
fn a_branch_rolled_back_past_a_forget_brings_nothing_back_even_to_a_machine_that_joins_again() {
    if !require_program("git") {
        return;
    }
    let remote = Remote::new();
    let (a, token) = first_machine(&remote);
    let b = machine();
    join(&b, &remote, &token);
    sync(&b);
    let before = remote.git(&["rev-parse", "refs/heads/claude-mem"]);
    let dropped = "aaaaaaaa-0000-4000-8000-000000000001";
    ok(&run(&a, &["forget", dropped, "--yes"]));
    sync(&a);
    assert!(sync(&b).contains("deletions"));
    assert!(!records(&b)["sessions"].contains(dropped));
    // The host puts the branch back where it was before the forget.
    remote.git(&["update-ref", "refs/heads/claude-mem", before.trim()]);
    sync(&b);
    assert!(!records(&b)["sessions"].contains(dropped), "synced on");
    // Leaving and joining again while the branch is rolled back.
    ok(&run(&b, &["sync", "off"]));
    join(&b, &remote, &token);
    let said = sync(&b);
    assert!(
        !records(&b)["sessions"].contains(dropped),
        "joined again: {said}"
    );
    assert_eq!(records(&b)["sessions"].len(), 1);
    sync(&a);
    assert!(!records(&a)["sessions"].contains(dropped));
}
