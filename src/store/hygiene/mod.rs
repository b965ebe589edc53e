//! Keeping the database clean and bounded: retention (prune, the size cap), forget (and the
//! ids of what it forgot, `forgotten`), scrub (today's rules over older rows), integrity
//! (check and repair), projects (sessions recorded under a subfolder moved to their
//! repository, and back), and the rebuild that leaves no copy of a deleted row anywhere in the
//! file. Each works in short slices (`base::slices`), so that a hook never waits long for the
//! write lock.

pub mod forget;
pub mod forgotten;
pub mod integrity;
pub mod projects;
pub mod rebuild;
pub mod retention;
pub mod scrub;
