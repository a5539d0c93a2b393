//! argon2id hashing: the parameters, round trips, the password rule and the bound on how
//! many hashes run at once.

use slicehub_core::auth::{check_new_password, hash_parameters, PasswordHasher};

#[tokio::test]
async fn argon2id_round_trips_with_owasp_parameters() {
    let hasher = PasswordHasher::new(2);
    let hash = hasher.hash("correct horse battery").await.unwrap();
    assert!(
        hash.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"),
        "{hash}"
    );
    assert_eq!(hash_parameters(&hash), Some((19_456, 2, 1)));
    assert!(hasher.verify("correct horse battery", &hash).await.unwrap());

    let again = hasher.hash("correct horse battery").await.unwrap();
    assert_ne!(hash, again, "every hash has its own salt");
    assert!(hasher
        .verify("correct horse battery", &again)
        .await
        .unwrap());
}

#[tokio::test]
async fn a_wrong_password_does_not_verify() {
    let hasher = PasswordHasher::new(2);
    let hash = hasher.hash("correct horse battery").await.unwrap();
    assert!(!hasher.verify("correct horse batterY", &hash).await.unwrap());
    assert!(!hasher.verify("", &hash).await.unwrap());
    assert!(!hasher.verify(&"x".repeat(5000), &hash).await.unwrap());
}

#[tokio::test]
async fn a_stored_value_that_is_not_a_hash_never_matches() {
    let hasher = PasswordHasher::new(1);
    assert!(!hasher.verify("anything at all", "!disabled").await.unwrap());
    assert!(!hasher.verify("", "").await.unwrap());
}

#[test]
fn the_password_rule_counts_characters_and_caps_bytes() {
    assert_eq!(
        check_new_password("123456789").unwrap_err(),
        "The password must be at least 10 characters long."
    );
    assert!(check_new_password("1234567890").is_ok());
    assert!(
        check_new_password("ääääääääää").is_ok(),
        "10 characters, 20 bytes"
    );
    assert!(check_new_password(&"x".repeat(1024)).is_ok());
    assert_eq!(
        check_new_password(&"x".repeat(1025)).unwrap_err(),
        "The password must be at most 1024 bytes long."
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn hashing_never_runs_more_than_the_limit_at_once() {
    for limit in [1, 2, 3] {
        let hasher = PasswordHasher::new(limit);
        let tasks: Vec<_> = (0..12)
            .map(|i| {
                let hasher = hasher.clone();
                tokio::spawn(async move { hasher.hash(&format!("password number {i}")).await })
            })
            .collect();
        for task in tasks {
            task.await.unwrap().unwrap();
        }
        let peak = hasher.peak_running();
        assert!(peak <= limit, "limit {limit}, but {peak} ran at once");
        assert!(
            peak >= limit.min(2),
            "limit {limit}: hashes should overlap, peak was {peak}"
        );
    }
}

#[tokio::test]
async fn hash_many_keeps_order_and_the_limit() {
    let hasher = PasswordHasher::new(2);
    let passwords: Vec<String> = (0..6).map(|i| format!("password number {i}")).collect();
    let hashes = hasher.hash_many(passwords.clone()).await.unwrap();
    for (password, hash) in passwords.iter().zip(&hashes) {
        assert!(hasher.verify(password, hash).await.unwrap());
    }
    assert!(hasher.peak_running() <= 2);
}

#[test]
fn zero_concurrency_means_one_per_cpu() {
    let cpus = std::thread::available_parallelism().unwrap().get();
    assert_eq!(PasswordHasher::new(0).concurrency(), cpus);
    assert_eq!(PasswordHasher::new(3).concurrency(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_login_hash_does_not_wait_for_a_whole_import() {
    let hasher = PasswordHasher::new(2);
    let import_hasher = hasher.clone();
    let started = std::time::Instant::now();
    let import = tokio::spawn(async move {
        let passwords = (0..40).map(|i| format!("imported password {i}")).collect();
        import_hasher.hash_many(passwords).await.unwrap();
        started.elapsed()
    });
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    let login_started = std::time::Instant::now();
    hasher.hash("a login meanwhile").await.unwrap();
    let login = login_started.elapsed();
    let import = import.await.unwrap();
    assert!(
        login * 4 < import,
        "the login waited {login:?}, the whole import took {import:?}"
    );
}
