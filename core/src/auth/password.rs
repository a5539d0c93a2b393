use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use argon2::password_hash::{PasswordHash, PasswordHasher as _, PasswordVerifier as _, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use tokio::sync::{OnceCell, Semaphore};
use tokio::task::JoinSet;

use super::tokens::random_bytes;
use crate::config::Config;
use crate::CoreError;

pub const MIN_PASSWORD_CHARS: usize = 10;
pub const MAX_PASSWORD_BYTES: usize = 1024;

/// argon2id with OWASP's recommended parameters (Password Storage Cheat Sheet):
/// m = 19456 KiB (19 MiB), t = 2 iterations, p = 1 lane, 32-byte output, 16-byte salt.
pub const ARGON2_MEMORY_KIB: u32 = 19_456;
pub const ARGON2_ITERATIONS: u32 = 2;
pub const ARGON2_LANES: u32 = 1;

/// The rule for a password someone is about to set: at least 10 characters, at most
/// 1024 bytes. The message is meant for the person typing it.
pub fn check_new_password(password: &str) -> Result<(), String> {
    if password.chars().count() < MIN_PASSWORD_CHARS {
        return Err(format!(
            "The password must be at least {MIN_PASSWORD_CHARS} characters long."
        ));
    }
    if password.len() > MAX_PASSWORD_BYTES {
        return Err(format!(
            "The password must be at most {MAX_PASSWORD_BYTES} bytes long."
        ));
    }
    Ok(())
}

fn argon2id() -> Result<Argon2<'static>, CoreError> {
    let params = Params::new(ARGON2_MEMORY_KIB, ARGON2_ITERATIONS, ARGON2_LANES, None)
        .map_err(|e| CoreError::Auth(format!("argon2 parameters: {e}")))?;
    Ok(Argon2::new(Algorithm::Argon2id, Version::V0x13, params))
}

/// Hashes and verifies passwords off the async runtime (on its own threads), at most
/// `concurrency` at a time: a burst of logins queues here instead of stalling other
/// requests or allocating 19 MiB per attempt all at once. Cheap to clone; clones share
/// the limit.
#[derive(Clone)]
pub struct PasswordHasher {
    inner: Arc<Inner>,
}

type Job = Box<dyn FnOnce() + Send>;

struct Inner {
    permits: Arc<Semaphore>,
    /// Feeds the hashing threads. Their own threads, not tokio's blocking pool: each
    /// thread's allocator keeps the 19 MiB a hash used, so a fixed few threads keep memory
    /// at `concurrency` × 19 MiB where tokio's growing pool would keep far more.
    jobs: std::sync::Mutex<std::sync::mpsc::Sender<Job>>,
    concurrency: usize,
    running: AtomicUsize,
    peak_running: AtomicUsize,
    /// Verified against when a login names no account, so that costs the same time.
    dummy_hash: OnceCell<String>,
}

impl PasswordHasher {
    /// `concurrency` 0 means one per CPU.
    pub fn new(concurrency: usize) -> Self {
        let concurrency = if concurrency == 0 {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        } else {
            concurrency
        };
        let (sender, receiver) = std::sync::mpsc::channel::<Job>();
        let receiver = Arc::new(std::sync::Mutex::new(receiver));
        for n in 0..concurrency {
            let receiver = receiver.clone();
            // Ends when the hasher (the only sender) is dropped.
            let spawned = std::thread::Builder::new()
                .name(format!("password-hash-{n}"))
                .spawn(move || loop {
                    let job = match receiver.lock() {
                        Ok(rx) => rx.recv(),
                        Err(poisoned) => poisoned.into_inner().recv(),
                    };
                    match job {
                        Ok(job) => job(),
                        Err(_) => break,
                    }
                });
            if let Err(e) = spawned {
                tracing::error!("cannot start a password hashing thread: {e}");
            }
        }
        PasswordHasher {
            inner: Arc::new(Inner {
                jobs: std::sync::Mutex::new(sender),
                permits: Arc::new(Semaphore::new(concurrency)),
                concurrency,
                running: AtomicUsize::new(0),
                peak_running: AtomicUsize::new(0),
                dummy_hash: OnceCell::new(),
            }),
        }
    }

    /// Sized by `auth.hash_concurrency`.
    pub fn from_config(config: &Config) -> Self {
        PasswordHasher::new(config.auth.hash_concurrency as usize)
    }

    /// How many hashes may run at once.
    pub fn concurrency(&self) -> usize {
        self.inner.concurrency
    }

    /// The most hashes that have run at the same moment since this hasher was made.
    pub fn peak_running(&self) -> usize {
        self.inner.peak_running.load(Ordering::SeqCst)
    }

    /// A PHC string (`$argon2id$v=19$m=19456,t=2,p=1$…`) with a fresh random salt.
    /// Does not apply the password rule; callers setting a password check it first.
    pub async fn hash(&self, password: &str) -> Result<String, CoreError> {
        if password.len() > MAX_PASSWORD_BYTES {
            return Err(CoreError::InvalidRequest(format!(
                "The password must be at most {MAX_PASSWORD_BYTES} bytes long."
            )));
        }
        let salt = SaltString::encode_b64(&random_bytes::<16>()?)
            .map_err(|e| CoreError::Auth(format!("password salt: {e}")))?;
        let password = password.to_owned();
        self.run_blocking(move || {
            argon2id()?
                .hash_password(password.as_bytes(), &salt)
                .map(|hash| hash.to_string())
                .map_err(|e| CoreError::Auth(format!("hashing a password failed: {e}")))
        })
        .await?
    }

    /// Hashes many passwords in order, keeping at most `concurrency` of them waiting for
    /// the limit at once, so a large import never queues ahead of a login by more than that.
    pub async fn hash_many(&self, passwords: Vec<String>) -> Result<Vec<String>, CoreError> {
        let mut hashes = vec![String::new(); passwords.len()];
        let mut pending = passwords.into_iter().enumerate();
        let mut running = JoinSet::new();
        loop {
            while running.len() < self.concurrency() {
                let Some((index, password)) = pending.next() else {
                    break;
                };
                let hasher = self.clone();
                running.spawn(async move { (index, hasher.hash(&password).await) });
            }
            let Some(done) = running.join_next().await else {
                break;
            };
            let (index, hash) =
                done.map_err(|e| CoreError::Auth(format!("hashing a password failed: {e}")))?;
            hashes[index] = hash?;
        }
        Ok(hashes)
    }

    /// Whether `password` matches the stored PHC string. A stored value that is not a PHC
    /// string never matches (and is logged), so such an account simply cannot log in.
    pub async fn verify(&self, password: &str, stored: &str) -> Result<bool, CoreError> {
        if password.len() > MAX_PASSWORD_BYTES {
            return Ok(false);
        }
        let password = password.to_owned();
        let stored = stored.to_owned();
        self.run_blocking(move || match PasswordHash::new(&stored) {
            Ok(parsed) => Ok(argon2id()?
                .verify_password(password.as_bytes(), &parsed)
                .is_ok()),
            Err(e) => {
                tracing::warn!(
                    "a stored password hash is not a PHC string ({e}); it never matches"
                );
                Ok(false)
            }
        })
        .await?
    }

    /// Spends the time of one verification without an account to verify against.
    pub async fn verify_dummy(&self, password: &str) -> Result<(), CoreError> {
        let dummy = self
            .inner
            .dummy_hash
            .get_or_try_init(|| async {
                let throwaway = super::tokens::new_session_token()?;
                self.hash(&throwaway).await
            })
            .await?;
        self.verify(password, dummy).await.map(|_| ())
    }

    async fn run_blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, CoreError> {
        let permit = self
            .inner
            .permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|e| CoreError::Auth(format!("password hasher closed: {e}")))?;
        let inner = self.inner.clone();
        let (reply, answer) = tokio::sync::oneshot::channel();
        // The permit moves into the job: if the caller gives up waiting, the hash still
        // holds its place until it has actually finished.
        let job: Job = Box::new(move || {
            let now = inner.running.fetch_add(1, Ordering::SeqCst) + 1;
            inner.peak_running.fetch_max(now, Ordering::SeqCst);
            let out = work();
            inner.running.fetch_sub(1, Ordering::SeqCst);
            drop(permit);
            let _ = reply.send(out);
        });
        let sent = match self.inner.jobs.lock() {
            Ok(jobs) => jobs.send(job),
            Err(poisoned) => poisoned.into_inner().send(job),
        };
        sent.map_err(|_| CoreError::Auth("no password hashing thread is running".to_string()))?;
        answer
            .await
            .map_err(|_| CoreError::Auth("password hashing failed".to_string()))
    }
}

/// The parameters a stored hash was made with: (memory KiB, iterations, lanes).
pub fn hash_parameters(stored: &str) -> Option<(u32, u32, u32)> {
    let parsed = PasswordHash::new(stored).ok()?;
    let params = Params::try_from(&parsed).ok()?;
    Some((params.m_cost(), params.t_cost(), params.p_cost()))
}
