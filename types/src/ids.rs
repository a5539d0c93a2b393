//! Ids of what the database keeps, each its own type, so a course's id never reaches a
//! place that wants a user's.

use std::fmt;

use serde::{Deserialize, Serialize};

macro_rules! id {
    ($($(#[$doc:meta])* $name:ident;)*) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        #[cfg_attr(feature = "sqlx", derive(sqlx::Type), sqlx(transparent))]
        #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
        pub struct $name(pub i64);

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }
    )*};
}

id! {
    /// An account (`users.id`).
    UserId;
    /// A course (`courses.id`).
    CourseId;
}

#[cfg(test)]
mod tests {
    use super::{CourseId, UserId};

    #[test]
    fn an_id_travels_as_its_bare_number() {
        assert_eq!(serde_json::to_string(&UserId(7)).unwrap(), "7");
        assert_eq!(serde_json::from_str::<CourseId>("12").unwrap(), CourseId(12));
        assert_eq!(UserId(7).to_string(), "7");
    }
}
