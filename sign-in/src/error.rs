/// What went wrong talking to an identity provider. Only [`SignInError::Refused`] and
/// [`SignInError::Unusable`] carry words for the person; the others are logged and
/// answered with plain words.
#[derive(Debug, thiserror::Error)]
pub enum SignInError {
    /// The sign-in cannot be accepted (a stale or forged answer, a token that fails its
    /// checks); the words are safe to show.
    #[error("{0}")]
    Refused(String),
    /// The provider vouched for someone without naming them in a form the portal can use
    /// (a claim the configuration points at is missing); the words are safe to show.
    #[error("{0}")]
    Unusable(String),
    /// The provider cannot be reached or answered nonsense.
    #[error("identity provider: {0}")]
    Provider(String),
    #[error(transparent)]
    Core(#[from] slicehub_core::CoreError),
}

impl SignInError {
    /// What the person is told.
    pub fn plain(&self) -> String {
        match self {
            SignInError::Refused(words) | SignInError::Unusable(words) => words.clone(),
            SignInError::Provider(_) => "The sign-in service did not answer as expected. Try again in a minute; if it keeps happening, tell the portal's administrators.".to_string(),
            SignInError::Core(_) => "Something went wrong on our side. Try again in a minute.".to_string(),
        }
    }
}
