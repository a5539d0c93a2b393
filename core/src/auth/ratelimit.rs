//! Login throttling per account and per client address.
//!
//! State lives in this process's memory (a `Mutex<HashMap>`), not in the database: a
//! restart forgets it, and several portal processes would each count on their own.
//! Entries are dropped once they hold no lock and no failure inside the window (accounts)
//! or their bucket is full again (addresses), so the maps hold at most the accounts and
//! addresses that failed recently.
//!
//! Per account and address (the back-off): after `max_failures` failures of one account
//! from one address within `window`, that pair is locked for 30 s (the account from every
//! other address is not: someone else's wrong passwords never refuse the owner's right one); from then on each further failure locks it again for twice as
//! long, up to 15 minutes. A whole window without failures after the last lock ended
//! starts over; a successful login clears the pair's entry. Attempts still being
//! checked count toward the threshold, and after a lock only one attempt at a time is let
//! through, so a burst of parallel guesses cannot slip in before the first fails.
//!
//! Per address (a pace, never a lock-out): one address shares a whole class (campus NAT)
//! or is the reverse proxy's, so it only slows down. Each failed login from an address
//! takes a token from its bucket, which holds `burst` tokens and earns one back every
//! `every_ms`; successes take none. While the bucket is empty, attempts from that address
//! wait for the next token: the answer is "try again in N seconds" with N never more than
//! `every_ms`, and waiting never grows with further failures. So one address checks at
//! most `burst` wrong passwords at once and then one per `every_ms` (default 30, then one
//! every 3 s: 1,200 an hour), however many accounts it sprays, and an account that is not
//! itself locked signs in from it after at most that short wait. Attempts in flight take
//! a token too once the address has failed (the bucket is not full), so parallel guesses
//! cannot overdraw it; before that a whole class signs in at once. An attacker who keeps
//! the bucket empty does compete with the others behind that address for its tokens.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    pub max_failures: usize,
    pub window_ms: i64,
}

/// A token bucket of failures: `burst` at once, then one more every `every_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pace {
    pub burst: u32,
    pub every_ms: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoginLimits {
    pub per_account: Limit,
    pub per_address: Pace,
    pub first_lock_ms: i64,
    pub max_lock_ms: i64,
}

impl Default for LoginLimits {
    fn default() -> Self {
        const MINUTE: i64 = 60_000;
        LoginLimits {
            per_account: Limit {
                max_failures: 5,
                window_ms: 15 * MINUTE,
            },
            per_address: Pace {
                burst: 30,
                every_ms: 3_000,
            },
            first_lock_ms: 30_000,
            max_lock_ms: 15 * MINUTE,
        }
    }
}

/// Longest account key kept; longer attempted usernames are cut (none is valid anyway).
const MAX_ACCOUNT_KEY_CHARS: usize = 128;
const PRUNE_EVERY_MS: i64 = 60_000;

pub struct LoginLimiter {
    limits: LoginLimits,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    accounts: HashMap<String, Counter>,
    addresses: HashMap<IpAddr, Bucket>,
    last_prune_ms: i64,
}

#[derive(Default)]
struct Counter {
    failures: VecDeque<i64>,
    strikes: u32,
    locked_until_ms: i64,
    in_flight: usize,
}

impl Counter {
    fn wait_ms(&self, limit: &Limit, limits: &LoginLimits, now: i64) -> Option<i64> {
        if self.locked_until_ms > now {
            return Some(self.locked_until_ms - now);
        }
        let recent = self
            .failures
            .iter()
            .filter(|&&at| at > now - limit.window_ms)
            .count();
        let decided_by_in_flight = self.in_flight > 0
            && (self.strikes > 0 || recent + self.in_flight >= limit.max_failures);
        decided_by_in_flight.then(|| lock_ms(limits, self.strikes))
    }

    fn record_failure(&mut self, limit: &Limit, limits: &LoginLimits, now: i64) {
        while self
            .failures
            .front()
            .is_some_and(|&at| at <= now - limit.window_ms)
        {
            self.failures.pop_front();
        }
        if self.failures.is_empty() && now - self.locked_until_ms >= limit.window_ms {
            self.strikes = 0;
        }
        self.failures.push_back(now);
        if self.strikes > 0 || self.failures.len() >= limit.max_failures {
            self.locked_until_ms = now + lock_ms(limits, self.strikes);
            self.strikes = self.strikes.saturating_add(1);
        }
    }

    fn is_spent(&self, limit: &Limit, now: i64) -> bool {
        self.in_flight == 0
            && now - self.locked_until_ms >= limit.window_ms
            && self
                .failures
                .back()
                .is_none_or(|&at| at <= now - limit.window_ms)
    }
}

/// One address's failures as a token bucket, kept as the time it is full again.
#[derive(Default)]
struct Bucket {
    full_at_ms: i64,
    in_flight: usize,
}

impl Bucket {
    fn wait_ms(&self, pace: &Pace, now: i64) -> Option<i64> {
        if self.full_at_ms <= now {
            return None;
        }
        let owed = self.full_at_ms - now + (self.in_flight as i64 + 1) * pace.every_ms;
        let over = owed - i64::from(pace.burst) * pace.every_ms;
        (over > 0).then(|| over.min(pace.every_ms))
    }

    /// Takes a token; an empty bucket stays empty (no debt), so waits never grow.
    fn record_failure(&mut self, pace: &Pace, now: i64) {
        let empty_at = now + i64::from(pace.burst) * pace.every_ms;
        self.full_at_ms = (self.full_at_ms.max(now) + pace.every_ms).min(empty_at);
    }

    fn is_spent(&self, now: i64) -> bool {
        self.in_flight == 0 && self.full_at_ms <= now
    }
}

fn lock_ms(limits: &LoginLimits, strikes: u32) -> i64 {
    limits
        .first_lock_ms
        .saturating_mul(1i64 << strikes.min(30))
        .min(limits.max_lock_ms)
}

/// An IPv6 client is counted by its /64, the block one subscriber usually holds.
fn address_key(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V4(_) => address,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6((u128::from(v6) & !((1u128 << 64) - 1)).into()),
        },
    }
}

/// The back-off's key: the account as typed (trimmed, lower-case) and the address's key.
fn account_key(username: &str, address: IpAddr) -> String {
    let name: String = username
        .trim()
        .to_lowercase()
        .chars()
        .take(MAX_ACCOUNT_KEY_CHARS)
        .collect();
    format!("{name} {}", address_key(address))
}

fn retry_secs(wait_ms: i64) -> u64 {
    (wait_ms.max(1) as u64).div_ceil(1000)
}

impl LoginLimiter {
    pub fn new(limits: LoginLimits) -> Arc<Self> {
        Arc::new(LoginLimiter {
            limits,
            state: Mutex::new(State::default()),
        })
    }

    pub fn limits(&self) -> &LoginLimits {
        &self.limits
    }

    /// Starts an attempt, or says in how many seconds one will be allowed.
    pub fn begin(
        self: &Arc<Self>,
        username: &str,
        address: IpAddr,
        now_ms: i64,
    ) -> Result<Attempt, u64> {
        let account = account_key(username, address);
        let address = address_key(address);
        let limits = self.limits;
        let mut state = self.lock();
        state.prune(&limits, now_ms);
        let account_wait = state
            .accounts
            .get(&account)
            .and_then(|c| c.wait_ms(&limits.per_account, &limits, now_ms));
        let address_wait = state
            .addresses
            .get(&address)
            .and_then(|b| b.wait_ms(&limits.per_address, now_ms));
        if let Some(wait) = account_wait.max(address_wait) {
            return Err(retry_secs(wait));
        }
        state.accounts.entry(account.clone()).or_default().in_flight += 1;
        state.addresses.entry(address).or_default().in_flight += 1;
        Ok(Attempt {
            limiter: self.clone(),
            account,
            address,
            open: true,
        })
    }

    /// Seconds until `username` may try again from `address`; None when it may now.
    pub fn retry_after(&self, username: &str, address: IpAddr, now_ms: i64) -> Option<u64> {
        let limits = self.limits;
        let state = self.lock();
        let account = state
            .accounts
            .get(&account_key(username, address))
            .and_then(|c| c.wait_ms(&limits.per_account, &limits, now_ms));
        let address = state
            .addresses
            .get(&address_key(address))
            .and_then(|b| b.wait_ms(&limits.per_address, now_ms));
        account.max(address).map(retry_secs)
    }

    /// How many accounts and addresses are being tracked.
    pub fn tracked(&self) -> (usize, usize) {
        let state = self.lock();
        (state.accounts.len(), state.addresses.len())
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // The state is plain counters; one left mid-update by a panic is still usable.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn close(&self, attempt: &Attempt, failed_at_ms: Option<i64>) {
        let limits = self.limits;
        let mut state = self.lock();
        if let Some(counter) = state.accounts.get_mut(&attempt.account) {
            counter.in_flight = counter.in_flight.saturating_sub(1);
            if let Some(now) = failed_at_ms {
                counter.record_failure(&limits.per_account, &limits, now);
            }
        }
        if let Some(bucket) = state.addresses.get_mut(&attempt.address) {
            bucket.in_flight = bucket.in_flight.saturating_sub(1);
            if let Some(now) = failed_at_ms {
                bucket.record_failure(&limits.per_address, now);
            }
        }
    }
}

impl State {
    fn prune(&mut self, limits: &LoginLimits, now: i64) {
        if now - self.last_prune_ms < PRUNE_EVERY_MS {
            return;
        }
        self.last_prune_ms = now;
        self.accounts
            .retain(|_, c| !c.is_spent(&limits.per_account, now));
        self.addresses.retain(|_, b| !b.is_spent(now));
    }
}

/// One login attempt in progress. Dropping it without an outcome (the client went away)
/// counts neither way.
pub struct Attempt {
    limiter: Arc<LoginLimiter>,
    account: String,
    address: IpAddr,
    open: bool,
}

impl Attempt {
    pub fn failed(mut self, now_ms: i64) {
        self.open = false;
        self.limiter.close(&self, Some(now_ms));
    }

    /// Clears the account's failures and locks; the address's bucket stays as it is.
    pub fn succeeded(mut self) {
        self.open = false;
        self.limiter.close(&self, None);
        self.limiter.lock().accounts.remove(&self.account);
    }
}

impl Drop for Attempt {
    fn drop(&mut self) {
        if self.open {
            self.open = false;
            self.limiter.close(self, None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ADDR: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 7));

    fn fail(limiter: &Arc<LoginLimiter>, user: &str, addr: IpAddr, now: i64) -> Result<(), u64> {
        limiter.begin(user, addr, now).map(|a| a.failed(now))
    }

    #[test]
    fn the_sixth_attempt_waits_30_s_and_each_further_failure_doubles_up_to_15_min() {
        let limiter = LoginLimiter::new(LoginLimits::default());
        for _ in 0..5 {
            fail(&limiter, "alice", ADDR, 0).unwrap();
        }
        assert_eq!(fail(&limiter, "alice", ADDR, 1_000), Err(29));
        let mut now = 30_000;
        for expected_secs in [60, 120, 240, 480, 900, 900] {
            fail(&limiter, "alice", ADDR, now).unwrap();
            assert_eq!(limiter.retry_after("alice", ADDR, now), Some(expected_secs));
            now += expected_secs as i64 * 1000;
        }
    }

    #[test]
    fn failures_from_one_address_never_lock_the_account_out_elsewhere() {
        let limiter = LoginLimiter::new(LoginLimits::default());
        let attacker = IpAddr::V4(std::net::Ipv4Addr::new(203, 0, 113, 9));
        for _ in 0..5 {
            fail(&limiter, "victim", attacker, 0).unwrap();
        }
        assert_eq!(limiter.retry_after("victim", attacker, 1_000), Some(29), "the attacker's pair is locked");
        assert_eq!(limiter.retry_after("victim", ADDR, 1_000), None, "the owner's address is not");
        limiter.begin("victim", ADDR, 1_000).expect("the owner may try").succeeded();
    }

    #[test]
    fn success_clears_the_account_but_not_the_address() {
        let limiter = LoginLimiter::new(LoginLimits::default());
        for _ in 0..4 {
            fail(&limiter, "bob", ADDR, 0).unwrap();
        }
        limiter.begin("bob", ADDR, 0).unwrap().succeeded();
        for _ in 0..4 {
            fail(&limiter, "bob", ADDR, 0).unwrap();
        }
        assert_eq!(
            limiter.retry_after("bob", ADDR, 0),
            None,
            "4 fresh failures stay below 5"
        );
        for i in 0..22 {
            fail(&limiter, &format!("other{i}"), ADDR, 0).unwrap();
        }
        assert_eq!(
            limiter.retry_after("carol", ADDR, 0),
            Some(3),
            "30 failures empty the address's bucket, success gave none back"
        );
        let elsewhere = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 8));
        assert_eq!(limiter.retry_after("carol", elsewhere, 0), None);
    }

    #[test]
    fn an_empty_address_bucket_slows_to_one_failure_per_3_s_and_never_locks() {
        let limiter = LoginLimiter::new(LoginLimits::default());
        for i in 0..30 {
            fail(&limiter, &format!("victim{i}"), ADDR, 0).unwrap();
        }
        for i in 0..1000 {
            assert_eq!(fail(&limiter, &format!("more{i}"), ADDR, 0), Err(3));
        }
        let mut now = 0;
        for round in 0..100 {
            now += 3_000;
            assert_eq!(
                limiter.retry_after("student", ADDR, now - 1),
                Some(1),
                "round {round}: the wait stays below 3 s"
            );
            fail(&limiter, &format!("spray{round}"), ADDR, now).expect("one token every 3 s");
            assert_eq!(fail(&limiter, "spray-again", ADDR, now), Err(3));
        }
        assert_eq!(
            limiter.retry_after("student", ADDR, now + 90_000),
            None,
            "90 s without failures fill the bucket"
        );
        for i in 0..30 {
            fail(&limiter, &format!("later{i}"), ADDR, now + 90_000).unwrap();
        }
    }

    #[test]
    fn parallel_attempts_count_before_they_finish() {
        let limiter = LoginLimiter::new(LoginLimits::default());
        let attempts: Vec<_> = (0..5)
            .map(|_| limiter.begin("alice", ADDR, 0).unwrap())
            .collect();
        assert!(
            limiter.begin("alice", ADDR, 0).is_err(),
            "a sixth concurrent guess waits"
        );
        drop(attempts);
        assert!(
            limiter.begin("alice", ADDR, 0).is_ok(),
            "abandoned attempts count neither way"
        );
    }

    #[test]
    fn a_class_behind_one_address_signs_in_at_once_until_that_address_fails() {
        let limiter = LoginLimiter::new(LoginLimits::default());
        let class: Vec<_> = (0..300)
            .map(|i| limiter.begin(&format!("student{i}"), ADDR, 0))
            .collect();
        assert!(
            class.iter().all(Result::is_ok),
            "300 parallel sign-ins from one NAT address"
        );
        drop(class);
        fail(&limiter, "mallory", ADDR, 0).unwrap();
        let guesses: Vec<_> = (0..29)
            .map(|i| limiter.begin(&format!("victim{i}"), ADDR, 0))
            .collect();
        assert!(guesses.iter().all(Result::is_ok));
        assert_eq!(
            limiter.begin("victim-more", ADDR, 0).err(),
            Some(3),
            "after a failure, attempts in flight take tokens too"
        );
    }

    #[test]
    fn a_quiet_window_forgives_and_idle_entries_are_pruned() {
        let limiter = LoginLimiter::new(LoginLimits::default());
        for _ in 0..5 {
            fail(&limiter, "alice", ADDR, 0).unwrap();
        }
        let later = 16 * 60_000;
        assert_eq!(limiter.retry_after("alice", ADDR, later), None);
        limiter.begin("zed", ADDR, later).unwrap().succeeded();
        assert_eq!(
            limiter.tracked(),
            (0, 1),
            "only the address in flight remains"
        );
    }

    #[test]
    fn ipv6_clients_are_counted_per_64_block_and_mapped_ipv4_as_ipv4() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:bbbb::9".parse().unwrap();
        assert_eq!(address_key(a), address_key(b));
        let mapped: IpAddr = "::ffff:10.0.0.7".parse().unwrap();
        assert_eq!(address_key(mapped), ADDR);
    }
}
