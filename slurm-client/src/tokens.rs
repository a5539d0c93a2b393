//! Who the portal is to slurmrestd. With the cluster's JWT key (`slurm.jwt_key_file`) it
//! mints a short-lived token for each student, so their jobs run as their own Unix users on
//! the nodes; without it every request uses the one configured token of `slurm.user`.

use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

use slicehub_core::slurm::{refusal, ClusterUsers};
use slicehub_core::CoreError;

/// How long a minted token lives: one request's worth, with room for clock skew.
const LIFESPAN_S: u64 = 300;

pub enum SlurmIdentity {
    /// Every request as `user` with its configured token.
    Shared { user: String, token: String },
    /// Requests as the cluster account the administrator linked to the student (or the
    /// service `user` for reads), each with a token signed with the cluster's key.
    PerStudent { user: String, key: jsonwebtoken::EncodingKey, users: ClusterUsers },
}

#[derive(Serialize)]
struct Claims<'a> {
    iat: u64,
    exp: u64,
    /// Slurm's claim for the user name.
    sun: &'a str,
}

impl SlurmIdentity {
    /// The cluster account the jobs of portal user `student` run as: the shared account,
    /// or the one the administrator's file links to the student.
    pub fn cluster_user(&self, student: &str) -> Result<String, CoreError> {
        match self {
            SlurmIdentity::Shared { user, .. } => Ok(user.clone()),
            SlurmIdentity::PerStudent { user, users, .. } => {
                let name = users.cluster_name(student).ok_or_else(|| {
                    CoreError::InvalidRequest(
                        "your account is not linked to an account on the Slurm cluster; ask an administrator to link it".to_string(),
                    )
                })?;
                match refusal(name, user) {
                    Some(_) => Err(CoreError::InvalidRequest(
                        "your account is linked to a cluster account that may not run students' jobs; ask an administrator".to_string(),
                    )),
                    None => Ok(name.to_string()),
                }
            }
        }
    }

    /// The user name and token for a request made for portal user `student` (`None`: the
    /// portal itself).
    pub fn credentials(&self, student: Option<&str>) -> Result<(String, String), CoreError> {
        match self {
            SlurmIdentity::Shared { user, token } => Ok((user.clone(), token.clone())),
            SlurmIdentity::PerStudent { user, key, .. } => {
                let name = match student {
                    Some(student) => self.cluster_user(student)?,
                    None => user.clone(),
                };
                let name = name.as_str();
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

    /// The portal names the administrator's file links (per-student mode; none otherwise).
    pub fn linked_portal_names(&self) -> Vec<String> {
        match self {
            SlurmIdentity::Shared { .. } => Vec::new(),
            SlurmIdentity::PerStudent { users, .. } => users.portal_names(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_students_token_names_the_student_and_verifies_with_the_clusters_key() {
        let secret = b"0123456789abcdef0123456789abcdef";
        let (users, _) = ClusterUsers::parse("alice\nbob b.jones\nmallory root\n", "portal");
        let identity = SlurmIdentity::PerStudent {
            user: "portal".into(),
            key: jsonwebtoken::EncodingKey::from_secret(secret),
            users,
        };
        let (name, token) = identity.credentials(Some("alice")).unwrap();
        assert_eq!(name, "alice");
        assert_eq!(identity.credentials(Some("bob")).unwrap().0, "b.jones");
        let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::HS256);
        validation.required_spec_claims = ["exp"].into_iter().map(String::from).collect();
        let data = jsonwebtoken::decode::<serde_json::Value>(&token, &jsonwebtoken::DecodingKey::from_secret(secret), &validation).unwrap();
        assert_eq!(data.claims["sun"], "alice");
        assert_eq!(identity.credentials(None).unwrap().0, "portal");
        for unlinked in ["root", "mallory", "0", "portal", "carol"] {
            assert!(matches!(identity.credentials(Some(unlinked)), Err(CoreError::InvalidRequest(_))), "{unlinked}");
        }
        let wrong = jsonwebtoken::DecodingKey::from_secret(b"another key entirely, 32 bytes!!");
        assert!(jsonwebtoken::decode::<serde_json::Value>(&token, &wrong, &validation).is_err());
    }
}
