//! What of this database goes into a project's `.claude-mem/` folder for the team, and what
//! leaves it again: the items `share` is asked for (named, since a time, above the floor of
//! sessions that did something), each as its file holds it, and the files of the items the
//! user forgets, taken back. The folder and its files are `team`'s; the rows, the store's.

pub mod choose;
pub mod note;
pub mod unshare;
