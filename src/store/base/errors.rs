//! Why a write failed, as a hook and the commands must tell it apart: a database that will not
//! work until a person acts ([`Refused`]), a lock someone else holds ([`is_busy`]), or a state
//! that may pass by itself, as against a write that breaks a constraint ([`is_transient`]).

use rusqlite::ErrorCode;

/// A database (or data dir) that will not work until a person acts: someone else's file, a
/// newer schema, a corrupt file. Retrying does not help; telling the user does.
#[derive(Debug)]
pub struct Refused(pub String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

/// Whether a failure will last until a person acts (see [`Refused`]), as opposed to a lock or
/// a full disk that a later run may find gone.
pub fn is_refused(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause.is::<Refused>()
            || matches!(
                cause
                    .downcast_ref::<rusqlite::Error>()
                    .and_then(rusqlite::Error::sqlite_error_code),
                Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt | ErrorCode::ReadOnly)
            )
    })
}

/// Whether applying a write failed because of the database's state now (locked, full, failing,
/// refused) rather than because of the write itself (a constraint it breaks): the first kind
/// leaves a spill file for later, the second sets it aside.
pub fn is_transient(err: &anyhow::Error) -> bool {
    !err.chain().any(|cause| {
        matches!(
            cause
                .downcast_ref::<rusqlite::Error>()
                .and_then(rusqlite::Error::sqlite_error_code),
            Some(ErrorCode::ConstraintViolation | ErrorCode::TypeMismatch | ErrorCode::TooBig)
        )
    })
}

/// Whether an error is a lock held by someone else, worth a retry within the wait budget.
pub fn is_busy(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        matches!(
            cause
                .downcast_ref::<rusqlite::Error>()
                .and_then(rusqlite::Error::sqlite_error_code),
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
        )
    })
}
