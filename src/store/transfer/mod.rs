//! The memory in and out: export and import as JSON Lines (`export`), the incumbent's database
//! read once into ours (`incumbent`), and what sync sends and takes in (`sync`: the export's
//! records, a few at a time, by id).

pub mod export;
pub mod incumbent;
pub mod sync;
