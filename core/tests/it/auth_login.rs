//! Logins, sessions and account changes, on SQLite and PostgreSQL, with a clock the
//! tests move by hand.

#[allow(dead_code)]

use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use slicehub_core::auth::{
    add_user, authorize, reset_password, set_admin, set_disabled, set_password, Action,
    Authenticator, Caller, Denied, LoginError, LoginLimits, NewUser, PasswordHasher, LoginPolicy,
};
use slicehub_core::clock::ManualClock;
use slicehub_core::store::{Store, User};
use slicehub_core::CoreError;

const T0: i64 = 1_750_000_000_000;
const MINUTE: i64 = 60_000;
const HOUR: i64 = 60 * MINUTE;
const PASSWORD: &str = "correct horse battery";

fn addr(last: u8) -> IpAddr {
    IpAddr::from([192, 0, 2, last])
}

struct Fixture {
    auth: Authenticator,
    clock: Arc<ManualClock>,
    store: Store,
}

impl Fixture {
    /// A session token for a successful login of `user` (password PASSWORD) from `addr(n)`.
    async fn token(&self, user: &str, n: u8) -> String {
        self.auth
            .login(user, PASSWORD, addr(n))
            .await
            .unwrap()
            .token
    }

    /// The newest audit rows of one action.
    async fn audit(&self, action: &str) -> Vec<slicehub_core::store::AuditEntry> {
        self.store.recent_audit(Some(action), 5).await.unwrap()
    }

    fn new(store: Store) -> Self {
        let clock = Arc::new(ManualClock::starting_at(T0));
        let policy = LoginPolicy {
            idle_ms: 480 * MINUTE,
            absolute_ms: 168 * HOUR,
        };
        let auth = Authenticator::new(
            store.clone(),
            PasswordHasher::new(2),
            policy,
            LoginLimits::default(),
            clock.clone(),
        );
        Fixture { auth, clock, store }
    }

    async fn add(&self, username: &str, is_admin: bool) -> User {
        let new = NewUser {
            username: username.to_string(),
            display_name: format!("{username} Example"),
            password: Some(PASSWORD.to_string()),
            is_admin,
            ..NewUser::default()
        };
        add_user(&self.store, self.auth.hasher(), new, "test")
            .await
            .unwrap()
            .user
    }

    async fn valid(&self, token: &str) -> bool {
        self.auth.login_user(token).await.unwrap().is_some()
    }
}

on_both_databases!(
    login_returns_a_token_that_resolves_to_the_user,
    unknown_user_wrong_password_and_disabled_account_get_the_same_answer,
    an_unknown_user_costs_as_much_time_as_a_wrong_password,
    rate_limit_engages_after_five_failures_per_account,
    one_address_is_slowed_but_never_locks_out_other_accounts,
    sessions_end_after_the_idle_time,
    sessions_end_at_the_absolute_limit_however_active,
    every_login_gets_a_new_token_and_logout_ends_one,
    changing_the_password_ends_every_session,
    a_one_time_password_forces_a_change_before_anything_else,
    disabling_ends_sessions_and_refuses_logins,
    the_last_enabled_admin_cannot_be_disabled_or_demoted,
    usernames_and_emails_are_checked_and_unique,
    nul_and_pages_of_text_in_a_username_are_refused_plainly,
);

/// A NUL (PostgreSQL refuses to store one: such a login answered 503) and pages of text are
/// refused as a bad request, before the limiter, the database and the audit log; lookups
/// and the audit log cope with a NUL wherever else it comes from.
async fn nul_and_pages_of_text_in_a_username_are_refused_plainly(store: Store) {
    let f = Fixture::new(store);
    f.add("bob", false).await;
    for name in ["bob\0".to_string(), "a\0b".to_string(), "x".repeat(100_000)] {
        match f.auth.login(&name, PASSWORD, addr(1)).await {
            Err(LoginError::Internal(CoreError::InvalidRequest(m))) => {
                assert!(m.starts_with("The username "), "{m}");
                assert!(m.len() < 200, "{m}");
            }
            other => panic!("{:?}: {other:?}", name.chars().take(10).collect::<String>()),
        }
    }
    assert!(f.audit("login.failure").await.is_empty(), "nothing was logged");
    assert!(f.store.user_by_username("bob\0").await.unwrap().is_none());
    assert!(f.store.course_by_code("CS\0101").await.unwrap().is_none());
    assert!(f.store.gpu_session("s-\0").await.unwrap().is_none());
    f.store.audit("anonymous", "login.failure", "a\0b", "192.0.2.1").await.unwrap();
    assert_eq!(f.audit("login.failure").await[0].subject, "a\u{FFFD}b");
    assert!(f.auth.login("bob", PASSWORD, addr(1)).await.is_ok(), "bob is not locked out");
}

async fn login_returns_a_token_that_resolves_to_the_user(store: Store) {
    let f = Fixture::new(store);
    let alice = f.add("alice", false).await;

    let ok = f.auth.login("Alice", PASSWORD, addr(1)).await.unwrap();
    assert_eq!(ok.user, alice);
    assert_eq!(ok.token.len(), 43);
    assert_eq!(ok.expires_at_ms, T0 + 168 * HOUR);
    assert_eq!(
        f.auth.login_user(&ok.token).await.unwrap(),
        Some(alice.clone())
    );
    match f.auth.caller(Some(&ok.token)).await.unwrap() {
        Caller::User {
            id,
            username,
            is_admin,
            ..
        } => {
            assert_eq!(
                (id, username.as_str(), is_admin),
                (alice.id, "alice", false)
            )
        }
        Caller::Anonymous => panic!("a valid token is a user"),
    }
    assert_eq!(f.auth.caller(None).await.unwrap(), Caller::Anonymous);
    assert_eq!(
        f.auth.caller(Some("forged")).await.unwrap(),
        Caller::Anonymous
    );
    assert_eq!(f.auth.login_user(&"A".repeat(43)).await.unwrap(), None);

    let audit = f.audit("login.success").await;
    assert_eq!(
        (audit[0].subject.as_str(), audit[0].detail.as_str()),
        ("alice", "192.0.2.1")
    );
}

async fn unknown_user_wrong_password_and_disabled_account_get_the_same_answer(store: Store) {
    let f = Fixture::new(store);
    f.add("admin", true).await;
    let bob = f.add("bob", false).await;
    let carol = f.add("carol", false).await;
    set_disabled(&f.store, carol.id, true, "admin")
        .await
        .unwrap();

    let unknown = f.auth.login("nobody", PASSWORD, addr(1)).await.unwrap_err();
    let wrong = f
        .auth
        .login("bob", "not the password", addr(1))
        .await
        .unwrap_err();
    let disabled = f.auth.login("carol", PASSWORD, addr(1)).await.unwrap_err();
    let malformed = f
        .auth
        .login("not a name!", PASSWORD, addr(1))
        .await
        .unwrap_err();
    for err in [&unknown, &wrong, &disabled, &malformed] {
        assert!(matches!(err, LoginError::WrongCredentials), "{err:?}");
        assert_eq!(err.to_string(), "Wrong username or password.");
    }

    let failures = f
        .store
        .recent_audit(Some("login.failure"), 10)
        .await
        .unwrap();
    let seen: Vec<(&str, &str)> = failures
        .iter()
        .map(|e| (e.subject.as_str(), e.detail.as_str()))
        .collect();
    assert_eq!(
        seen,
        [
            ("not a name!", "192.0.2.1"),
            ("carol", "192.0.2.1"),
            ("bob", "192.0.2.1"),
            ("nobody", "192.0.2.1")
        ]
    );
    assert!(
        f.auth.login("bob", PASSWORD, addr(1)).await.is_ok(),
        "{bob:?} still logs in"
    );
}

async fn an_unknown_user_costs_as_much_time_as_a_wrong_password(store: Store) {
    let f = Fixture::new(store);
    f.add("bob", false).await;
    f.auth
        .login("warm-up", PASSWORD, addr(9))
        .await
        .unwrap_err();
    let mut unknown = Duration::MAX;
    let mut wrong = Duration::MAX;
    for i in 0..3 {
        let started = Instant::now();
        f.auth
            .login(&format!("nobody{i}"), PASSWORD, addr(2))
            .await
            .unwrap_err();
        unknown = unknown.min(started.elapsed());
        let started = Instant::now();
        f.auth
            .login("bob", "not the password", addr(3))
            .await
            .unwrap_err();
        wrong = wrong.min(started.elapsed());
    }
    assert!(
        unknown * 3 >= wrong,
        "unknown user {unknown:?} vs wrong password {wrong:?}"
    );
    assert!(
        unknown >= Duration::from_millis(5),
        "an argon2id verification ran: {unknown:?}"
    );
}

async fn rate_limit_engages_after_five_failures_per_account(store: Store) {
    let f = Fixture::new(store);
    f.add("alice", false).await;
    for i in 0..5 {
        let err = f
            .auth
            .login("alice", "wrong password", addr(6))
            .await
            .unwrap_err();
        assert!(
            matches!(err, LoginError::WrongCredentials),
            "attempt {i}: {err:?}"
        );
    }
    let err = f.auth.login("alice", PASSWORD, addr(6)).await.unwrap_err();
    assert!(
        matches!(
            err,
            LoginError::RateLimited {
                retry_after_secs: 30
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "Too many failed attempts. Try again in 30 seconds."
    );
    // Someone else's failures never refuse the owner's right password from elsewhere.
    f.auth
        .login("alice", PASSWORD, addr(7))
        .await
        .expect("the lock holds only for the address that failed");

    f.clock.advance_ms(10_000);
    let err = f.auth.login("alice", PASSWORD, addr(6)).await.unwrap_err();
    assert!(
        matches!(
            err,
            LoginError::RateLimited {
                retry_after_secs: 20
            }
        ),
        "{err:?}"
    );

    f.clock.advance_ms(20_000);
    f.auth
        .login("alice", PASSWORD, addr(6))
        .await
        .expect("the lock has run out");
    let err = f
        .auth
        .login("alice", "wrong password", addr(6))
        .await
        .unwrap_err();
    assert!(
        matches!(err, LoginError::WrongCredentials),
        "success reset the account's count: {err:?}"
    );
    f.auth
        .login("alice", PASSWORD, addr(6))
        .await
        .expect("one failure does not lock");
}

/// A whole class behind one NAT address: the sprayed accounts lock from that address only,
/// the address only slows down, and a classmate with the right password gets in.
async fn one_address_is_slowed_but_never_locks_out_other_accounts(store: Store) {
    let f = Fixture::new(store);
    for name in ["carol", "dave", "v0", "v1", "v2", "v3", "v4"] {
        f.add(name, false).await;
    }
    let nat = addr(50);
    for victim in ["v0", "v1", "v2", "v3", "v4"] {
        for _ in 0..5 {
            let err = f
                .auth
                .login(victim, "wrong password", nat)
                .await
                .unwrap_err();
            assert!(matches!(err, LoginError::WrongCredentials), "{err:?}");
        }
    }
    f.auth
        .login("carol", PASSWORD, nat)
        .await
        .expect("25 failures from her address do not lock carol out");
    for victim in ["v0", "v1", "v2", "v3", "v4"] {
        let err = f.auth.login(victim, PASSWORD, nat).await.unwrap_err();
        assert!(
            matches!(
                err,
                LoginError::RateLimited {
                    retry_after_secs: 30
                }
            ),
            "{victim} is locked from the address that failed: {err:?}"
        );
        f.auth
            .login(victim, PASSWORD, addr(51))
            .await
            .unwrap_or_else(|e| panic!("{victim} still signs in from elsewhere: {e:?}"));
    }

    for i in 0..5 {
        f.auth
            .login(&format!("guess{i}"), "wrong password", nat)
            .await
            .unwrap_err();
    }
    for i in 0..50 {
        let err = f.auth.login("dave", PASSWORD, nat).await.unwrap_err();
        assert!(
            matches!(
                err,
                LoginError::RateLimited {
                    retry_after_secs: 3
                }
            ),
            "attempt {i}: 30 failures slow the address for 3 s, however often it asks: {err:?}"
        );
    }
    f.clock.advance_ms(3_000);
    f.auth
        .login("dave", PASSWORD, nat)
        .await
        .expect("dave signs in after the 3 s wait");
}

async fn sessions_end_after_the_idle_time(store: Store) {
    let f = Fixture::new(store);
    f.add("alice", false).await;
    let token = f.token("alice", 1).await;

    f.clock.advance_ms(479 * MINUTE);
    assert!(f.valid(&token).await, "used just before the idle limit");
    f.clock.advance_ms(479 * MINUTE);
    assert!(f.valid(&token).await, "each use restarts the idle time");
    f.clock.advance_ms(480 * MINUTE);
    assert!(
        !f.valid(&token).await,
        "8 hours without a request end the session"
    );
    f.clock.advance_ms(-480 * MINUTE);
    assert!(!f.valid(&token).await, "an ended session is gone for good");
}

async fn sessions_end_at_the_absolute_limit_however_active(store: Store) {
    let f = Fixture::new(store);
    f.add("alice", false).await;
    let token = f.token("alice", 1).await;
    for hour in (7..168).step_by(7) {
        f.clock.set_ms(T0 + hour * HOUR);
        assert!(
            f.valid(&token).await,
            "still valid after {hour} h of activity"
        );
    }
    f.clock.set_ms(T0 + 168 * HOUR);
    assert!(
        !f.valid(&token).await,
        "a week after the login the session ends"
    );
}

async fn every_login_gets_a_new_token_and_logout_ends_one(store: Store) {
    let f = Fixture::new(store);
    f.add("alice", false).await;
    let first = f.token("alice", 1).await;
    let second = f.token("alice", 1).await;
    assert_ne!(first, second);

    f.auth.logout(&first).await.unwrap();
    assert!(!f.valid(&first).await);
    assert!(f.valid(&second).await, "logging out ends only that session");
    f.auth
        .logout(&first)
        .await
        .expect("logging out twice is harmless");
    let audit = f.audit("logout").await;
    assert_eq!(audit.len(), 1);
    assert_eq!(audit[0].actor, "alice");
}

async fn changing_the_password_ends_every_session(store: Store) {
    let f = Fixture::new(store);
    let alice = f.add("alice", false).await;
    let laptop = f.token("alice", 1).await;
    let phone = f.token("alice", 2).await;

    let err = f
        .auth
        .change_own_password(
            alice.id,
            "not the password",
            "a brand new password",
            addr(1),
        )
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "authentication: The current password is wrong."
    );
    let err = f
        .auth
        .change_own_password(alice.id, PASSWORD, "short", addr(1))
        .await
        .unwrap_err();
    assert!(matches!(err, CoreError::InvalidRequest(_)), "{err}");
    assert!(f.valid(&laptop).await, "failed changes end nothing");

    let fresh = f
        .auth
        .change_own_password(alice.id, PASSWORD, "a brand new password", addr(1))
        .await
        .unwrap();
    assert!(
        !f.valid(&laptop).await && !f.valid(&phone).await,
        "old sessions end"
    );
    assert!(f.valid(&fresh.token).await, "the caller gets a new session");
    assert!(f.auth.login("alice", PASSWORD, addr(1)).await.is_err());
    assert!(f
        .auth
        .login("alice", "a brand new password", addr(1))
        .await
        .is_ok());

    // An administrator setting the password ends every session too.
    set_password(
        &f.store,
        f.auth.hasher(),
        alice.id,
        "set by the admin",
        "admin",
    )
    .await
    .unwrap();
    assert_eq!(f.store.count_logins_of_user(alice.id).await.unwrap(), 0);
    assert!(f
        .auth
        .login("alice", "set by the admin", addr(1))
        .await
        .is_ok());
    let changes = f
        .store
        .recent_audit(Some("password.change"), 5)
        .await
        .unwrap();
    assert_eq!(changes.len(), 2);
}

async fn a_one_time_password_forces_a_change_before_anything_else(store: Store) {
    let f = Fixture::new(store);
    let admin = f.add("admin", true).await;
    let new = NewUser {
        username: "dana".into(),
        display_name: "Dana".into(),
        ..NewUser::default()
    };
    let created = add_user(&f.store, f.auth.hasher(), new, "admin")
        .await
        .unwrap();
    let otp = created
        .one_time_password
        .expect("no password given: one is generated");
    assert!(created.user.must_change_password);

    let ok = f.auth.login("dana", &otp, addr(1)).await.unwrap();
    assert!(
        ok.user.must_change_password,
        "the login works but flags the change"
    );
    let caller = f.auth.caller(Some(&ok.token)).await.unwrap();
    assert_eq!(
        authorize(&caller, &Action::ViewCourse(slicehub_core::CourseId(1))),
        Err(Denied::MustChangePassword)
    );
    assert_eq!(authorize(&caller, &Action::ViewOwnAccount), Ok(()));
    assert_eq!(authorize(&caller, &Action::ChangeOwnPassword), Ok(()));

    let err = f
        .auth
        .change_own_password(ok.user.id, &otp, &otp, addr(1))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("must differ"), "{err}");
    let changed = f
        .auth
        .change_own_password(ok.user.id, &otp, "dana's own password", addr(1))
        .await
        .unwrap();
    assert!(!changed.user.must_change_password);
    let caller = f.auth.caller(Some(&changed.token)).await.unwrap();
    assert_eq!(authorize(&caller, &Action::ViewOwnAccount), Ok(()));
    assert_eq!(
        authorize(&caller, &Action::ListUsers),
        Err(Denied::Forbidden)
    );

    // An administrator's reset hands out a new one-time password and ends the sessions.
    let reset = reset_password(&f.store, f.auth.hasher(), ok.user.id, &admin.username)
        .await
        .unwrap();
    assert!(!f.valid(&changed.token).await);
    assert!(f
        .auth
        .login("dana", "dana's own password", addr(1))
        .await
        .is_err());
    let again = f.auth.login("dana", &reset, addr(1)).await.unwrap();
    assert!(again.user.must_change_password);
    let audit = f.audit("password.reset").await;
    assert_eq!(
        (audit[0].actor.as_str(), audit[0].subject.as_str()),
        ("admin", "dana")
    );
}

async fn disabling_ends_sessions_and_refuses_logins(store: Store) {
    let f = Fixture::new(store);
    f.add("admin", true).await;
    let bob = f.add("bob", false).await;
    let token = f.token("bob", 1).await;

    set_disabled(&f.store, bob.id, true, "admin").await.unwrap();
    assert!(!f.valid(&token).await);
    assert_eq!(f.store.count_logins_of_user(bob.id).await.unwrap(), 0);
    assert!(matches!(
        f.auth.login("bob", PASSWORD, addr(1)).await,
        Err(LoginError::WrongCredentials)
    ));
    set_disabled(&f.store, bob.id, false, "admin")
        .await
        .unwrap();
    assert!(f.auth.login("bob", PASSWORD, addr(1)).await.is_ok());

    let actions: Vec<String> = f
        .store
        .recent_audit(None, 20)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.action)
        .collect();
    assert!(actions.contains(&"user.disable".to_string()), "{actions:?}");
    assert!(actions.contains(&"user.enable".to_string()), "{actions:?}");
}

async fn the_last_enabled_admin_cannot_be_disabled_or_demoted(store: Store) {
    let f = Fixture::new(store);
    let root = f.add("root", true).await;
    let err = set_disabled(&f.store, root.id, true, "root")
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("last enabled administrator"),
        "{err}"
    );
    let err = set_admin(&f.store, root.id, false, "root")
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("last enabled administrator"),
        "{err}"
    );

    let second = f.add("second", false).await;
    set_admin(&f.store, second.id, true, "root").await.unwrap();
    set_disabled(&f.store, root.id, true, "second")
        .await
        .expect("another admin remains");
    let err = set_admin(&f.store, second.id, false, "second")
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("last enabled administrator"),
        "{err}"
    );
    assert!(
        f.store
            .user_by_id(second.id)
            .await
            .unwrap()
            .unwrap()
            .is_admin
    );
    let grants = f.store.recent_audit(Some("user.admin"), 5).await.unwrap();
    assert_eq!(grants.len(), 1);
    assert_eq!(grants[0].detail, "granted");
}

async fn usernames_and_emails_are_checked_and_unique(store: Store) {
    let f = Fixture::new(store);
    let hasher = f.auth.hasher();
    let new = |username: &str, email: Option<&str>| NewUser {
        username: username.into(),
        display_name: "Someone".into(),
        email: email.map(str::to_string),
        password: Some(PASSWORD.into()),
        ..NewUser::default()
    };
    let made = add_user(
        &f.store,
        hasher,
        new(" Eve.Smith ", Some("eve@uni.example")),
        "t",
    )
    .await
    .unwrap();
    assert_eq!(made.user.username, "eve.smith");
    assert_eq!(made.user.email.as_deref(), Some("eve@uni.example"));
    assert!(made.one_time_password.is_none());
    assert!(!made.user.must_change_password);

    let dup = add_user(&f.store, hasher, new("EVE.SMITH", None), "t")
        .await
        .unwrap_err();
    assert!(matches!(dup, CoreError::Conflict(_)), "{dup}");
    assert!(
        dup.to_string().contains("`eve.smith` is already taken"),
        "{dup}"
    );
    let bad = add_user(&f.store, hasher, new("eve smith", None), "t")
        .await
        .unwrap_err();
    assert!(matches!(bad, CoreError::InvalidRequest(_)), "{bad}");
    let bad = add_user(&f.store, hasher, new("frank", Some("frank@")), "t")
        .await
        .unwrap_err();
    assert!(bad.to_string().contains("not an email address"), "{bad}");
    let mut short = new("frank", None);
    short.password = Some("too short".into());
    let bad = add_user(&f.store, hasher, short, "t").await.unwrap_err();
    assert!(bad.to_string().contains("at least 10 characters"), "{bad}");

    let listed: Vec<String> = f
        .store
        .list_users()
        .await
        .unwrap()
        .into_iter()
        .map(|u| u.username)
        .collect();
    assert_eq!(listed, ["eve.smith"]);
}
