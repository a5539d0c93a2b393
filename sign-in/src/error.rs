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

/// An error with what lies under it, for the log: each cause whose words the text does
/// not hold already (rustls's certificate complaint sits under an I/O error; many errors
/// repeat their cause in their own words).
pub fn describe(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let more = cause.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::describe;

    #[derive(Debug)]
    struct Layer(&'static str, Option<Box<Layer>>);
    impl std::fmt::Display for Layer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }
    impl std::error::Error for Layer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|l| l as &(dyn std::error::Error + 'static))
        }
    }

    #[test]
    fn describe_gives_each_cause_once() {
        let e = Layer("cannot connect: refused", Some(Box::new(Layer("refused", Some(Box::new(Layer("bad certificate", None)))))));
        assert_eq!(describe(&e), "cannot connect: refused: bad certificate");
        assert_eq!(describe(&Layer("alone", None)), "alone");
    }
}
