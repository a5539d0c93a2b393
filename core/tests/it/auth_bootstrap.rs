//! The first administrator on an empty database, on SQLite and PostgreSQL.

#[allow(dead_code)]

use std::net::IpAddr;
use std::sync::Arc;

use slicehub_core::auth::{
    ensure_first_admin, Authenticator, LoginLimits, PasswordHasher, LoginPolicy,
};
use slicehub_core::clock::SystemClock;
use slicehub_core::store::Store;
use slicehub_core::CoreError;

const LOCALHOST: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

fn authenticator(store: &Store, hasher: &PasswordHasher) -> Authenticator {
    let policy = LoginPolicy {
        idle_ms: 3_600_000,
        absolute_ms: 86_400_000,
    };
    Authenticator::new(
        store.clone(),
        hasher.clone(),
        policy,
        LoginLimits::default(),
        Arc::new(SystemClock),
    )
}

on_both_databases!(
    the_first_start_creates_admin_with_the_password_from_the_environment,
    the_first_start_generates_a_one_time_password_when_none_is_given,
    a_too_short_environment_password_is_refused_and_creates_nothing,
);

async fn the_first_start_creates_admin_with_the_password_from_the_environment(store: Store) {
    let hasher = PasswordHasher::new(2);
    let made = ensure_first_admin(&store, &hasher, Some("admin password 1".into()))
        .await
        .unwrap()
        .expect("an empty database gets its first admin");
    assert_eq!(made.username, "admin");
    assert_eq!(made.password, "admin password 1");
    assert!(!made.generated);

    let ok = authenticator(&store, &hasher)
        .login("admin", "admin password 1", LOCALHOST)
        .await;
    let user = ok.unwrap().user;
    assert!(user.is_admin);
    assert!(
        !user.must_change_password,
        "a password the operator chose stays"
    );

    let later = ensure_first_admin(&store, &hasher, Some("another password".into())).await;
    assert_eq!(later.unwrap(), None, "any later start changes nothing");
    assert_eq!(store.count_users().await.unwrap(), 1);
    let audit = store.recent_audit(Some("user.create"), 5).await.unwrap();
    assert_eq!(
        (audit[0].actor.as_str(), audit[0].subject.as_str()),
        ("system", "admin")
    );
}

async fn the_first_start_generates_a_one_time_password_when_none_is_given(store: Store) {
    let hasher = PasswordHasher::new(2);
    let made = ensure_first_admin(&store, &hasher, Some("   ".into()))
        .await
        .unwrap()
        .expect("an empty database gets its first admin");
    assert!(made.generated, "a blank variable counts as none");
    assert_eq!(made.password.len(), 19, "{}", made.password);

    let user = authenticator(&store, &hasher)
        .login("admin", &made.password, LOCALHOST)
        .await
        .unwrap()
        .user;
    assert!(user.is_admin && user.must_change_password);
    assert_eq!(
        ensure_first_admin(&store, &hasher, None).await.unwrap(),
        None
    );
}

async fn a_too_short_environment_password_is_refused_and_creates_nothing(store: Store) {
    let hasher = PasswordHasher::new(1);
    let err = ensure_first_admin(&store, &hasher, Some("short".into()))
        .await
        .unwrap_err();
    assert!(matches!(err, CoreError::InvalidRequest(_)), "{err}");
    assert!(err.to_string().contains("at least 10 characters"), "{err}");
    assert_eq!(store.count_users().await.unwrap(), 0);
}
