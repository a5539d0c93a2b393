//! Who the portal is to slurmrestd. With the cluster's JWT key (`slurm.jwt_key_file`) it
//! mints a short-lived token for each student, so their jobs run as their own Unix users on
//! the nodes; without it every request uses the one configured token of `slurm.user`.

use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::CoreError;

/// How long a minted token lives: one request's worth, with room for clock skew.
const LIFESPAN_S: u64 = 300;

/// Accounts a student's name may not become on the cluster.
const RESERVED: &[&str] = &["root", "slurm", "munge", "daemon", "nobody"];

pub enum SlurmIdentity {
    /// Every request as `user` with its configured token.
    Shared { user: String, token: String },
    /// Requests as the student (or the service `user` for reads), each with a token signed
    /// with the cluster's key.
    PerStudent { user: String, key: jsonwebtoken::EncodingKey },
}

#[derive(Serialize)]
struct Claims<'a> {
    iat: u64,
    exp: u64,
    /// Slurm's claim for the user name.
    sun: &'a str,
}

impl SlurmIdentity {
    /// The user name and token for a request made for `student` (`None`: the portal itself).
    pub fn credentials(&self, student: Option<&str>) -> Result<(String, String), CoreError> {
        match self {
            SlurmIdentity::Shared { user, token } => Ok((user.clone(), token.clone())),
            SlurmIdentity::PerStudent { user, key } => {
                let name = student.unwrap_or(user);
                if RESERVED.contains(&name) {
                    return Err(CoreError::InvalidRequest(format!(
                        "the account name {name:?} is reserved on the Slurm cluster; ask an administrator to rename it"
                    )));
                }
                let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
                let claims = Claims { iat: now, exp: now + LIFESPAN_S, sun: name };
                let token = jsonwebtoken::encode(&jsonwebtoken::Header::default(), &claims, key)
                    .map_err(|e| CoreError::Cluster(format!("a token for {name} could not be signed: {e}")))?;
                Ok((name.to_string(), token))
            }
        }
    }

    /// Whether each student's jobs run as their own user.
    pub fn per_student(&self) -> bool {
        matches!(self, SlurmIdentity::PerStudent { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_students_token_names_the_student_and_verifies_with_the_clusters_key() {
        let secret = b"0123456789abcdef0123456789abcdef";
        let identity = SlurmIdentity::PerStudent {
            user: "portal".into(),
            key: jsonwebtoken::EncodingKey::from_secret(secret),
        };
        let (name, token) = identity.credentials(Some("alice")).unwrap();
        assert_eq!(name, "alice");
        let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::HS256);
        validation.required_spec_claims = ["exp"].into_iter().map(String::from).collect();
        let data = jsonwebtoken::decode::<serde_json::Value>(&token, &jsonwebtoken::DecodingKey::from_secret(secret), &validation).unwrap();
        assert_eq!(data.claims["sun"], "alice");
        assert_eq!(identity.credentials(None).unwrap().0, "portal");
        assert!(matches!(identity.credentials(Some("root")), Err(CoreError::InvalidRequest(_))));
        let wrong = jsonwebtoken::DecodingKey::from_secret(b"another key entirely, 32 bytes!!");
        assert!(jsonwebtoken::decode::<serde_json::Value>(&token, &wrong, &validation).is_err());
    }
}
