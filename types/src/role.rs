//! A person's role in one course.

use serde::{Deserialize, Serialize};

use crate::words::UnknownName;

/// A person's role in one course: instructors run it, students use its GPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Instructor,
    Student,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Instructor => "instructor",
            Role::Student => "student",
        }
    }

    pub fn parse(text: &str) -> Option<Role> {
        [Role::Instructor, Role::Student].into_iter().find(|r| r.as_str() == text)
    }
}

crate::words::words! {
    Role, "course role";
}

#[cfg(test)]
mod tests {
    use super::Role;

    #[test]
    fn a_role_reads_back_from_its_word_and_nothing_else() {
        for role in [Role::Instructor, Role::Student] {
            assert_eq!(Role::try_from(role.to_string()), Ok(role));
        }
        let err = Role::try_from("Instructor".to_string()).unwrap_err();
        assert_eq!(err.to_string(), "unknown course role \"Instructor\"");
    }
}
