//! Keeping the database clean and bounded: retention (prune, the size cap), forget, scrub
//! (today's rules over older rows), integrity (check and repair), the rebuild that leaves no
//! copy of a deleted row anywhere in the file, and the short slices all of them work in so that
//! a hook never waits long for the write lock.

pub mod forget;
pub mod integrity;
pub mod rebuild;
pub mod retention;
pub mod scrub;
pub mod slices;
