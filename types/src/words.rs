//! Enums stored and sent as words: their `Display` and their reading back.

/// A stored or sent name this build does not know (a row edited by hand, a newer release).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} {name:?}")]
pub struct UnknownName {
    pub what: &'static str,
    pub name: String,
}

/// `Display` as `as_str()`, and `TryFrom<String>` through `parse`, for each type named
/// with what it is called in an error.
macro_rules! words {
    ($($ty:ident, $what:literal;)*) => {$(
        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl TryFrom<String> for $ty {
            type Error = UnknownName;
            fn try_from(name: String) -> Result<Self, UnknownName> {
                $ty::parse(&name).ok_or(UnknownName { what: $what, name })
            }
        }
    )*};
}

pub(crate) use words;
