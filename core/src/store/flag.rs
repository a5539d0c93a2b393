//! A 0/1 column, decoded strictly: any other number is a damaged row, not a `true`.

use crate::CoreError;

pub(super) struct Flag(pub(super) bool);

impl TryFrom<i64> for Flag {
    type Error = CoreError;
    fn try_from(value: i64) -> Result<Self, CoreError> {
        match value {
            0 => Ok(Flag(false)),
            1 => Ok(Flag(true)),
            other => Err(CoreError::Database(format!("a flag column holds {other}"))),
        }
    }
}
