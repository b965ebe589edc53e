//! The memory in and out: export and import as JSON Lines (`export`), and the incumbent's
//! database read once into ours (`incumbent`).

pub mod export;
pub mod incumbent;
