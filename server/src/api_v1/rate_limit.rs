//! The APIs' rate limit (`tower_governor`), one for the REST and the hub API together:
//! each person (whatever token of theirs is used) their own pace, and each client address
//! its own for requests without a valid token. The address is the one the portal derives
//! from `server.trusted_proxies` (never `X-Forwarded-For` from anyone else), and a made-up
//! token counts against its sender's address, so inventing tokens gains nothing.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::Request;
use slicehub_app::api::ssr::RequestAuth;
use slicehub_core::auth::TokenCaller;
use tower_governor::governor::GovernorConfigBuilder;
use tower_governor::key_extractor::KeyExtractor;
use tower_governor::{GovernorError, GovernorLayer};

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Caller {
    Person(slicehub_core::UserId),
    Address(IpAddr),
}

#[derive(Debug, Clone, Copy)]
pub struct ByPersonOrAddress;

impl KeyExtractor for ByPersonOrAddress {
    type Key = Caller;

    fn extract<T>(&self, request: &Request<T>) -> Result<Caller, GovernorError> {
        if let Some(TokenCaller { caller: slicehub_core::auth::Caller::User { id, .. }, .. }) = request.extensions().get::<TokenCaller>() {
            return Ok(Caller::Person(*id));
        }
        request
            .extensions()
            .get::<RequestAuth>()
            .map(|auth| Caller::Address(auth.address))
            .ok_or(GovernorError::UnableToExtractKey)
    }
}

pub type Layer = GovernorLayer<ByPersonOrAddress, governor::middleware::NoOpMiddleware<governor::clock::QuantaInstant>, Body>;

pub fn layer(config: &slicehub_core::config::Config) -> Layer {
    let governor = GovernorConfigBuilder::default()
        .period(period_of(config.server.api_requests_per_minute))
        .burst_size(config.server.api_burst.max(1))
        .key_extractor(ByPersonOrAddress)
        .finish()
        .map(Arc::new)
        .expect("a pace and a burst above zero");
    let limiter = Arc::downgrade(governor.limiter());
    forget_quiet_callers(move || limiter.upgrade().map(|l| l.retain_recent()).is_some());
    GovernorLayer::new(governor)
}

/// The time between two requests at `per_minute` a minute.
fn period_of(per_minute: u32) -> Duration {
    Duration::from_nanos(60_000_000_000 / u64::from(per_minute.max(1)))
}

/// Every minute, callers not seen for a while are forgotten (`forget` answers false once
/// its limiter is gone), so a limiter's table stays as small as its recent callers.
fn forget_quiet_callers(forget: impl Fn() -> bool + Send + 'static) {
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        runtime.spawn(async move {
            let mut every = tokio::time::interval(Duration::from_secs(60));
            loop {
                every.tick().await;
                if !forget() {
                    break;
                }
            }
        });
    }
}

/// A pace per client address for every API request, asked before its token is looked
/// up, so a flood of made-up tokens costs the database nothing past it. Ten times a
/// person's pace: several people behind one address still fit.
#[derive(Clone)]
pub struct AddressGate {
    limiter: Arc<governor::DefaultKeyedRateLimiter<IpAddr>>,
    trusted: slicehub_core::config::TrustedProxies,
}

impl AddressGate {
    pub fn new(config: &slicehub_core::config::Config) -> AddressGate {
        let per_minute = config.server.api_requests_per_minute.saturating_mul(10);
        let burst = std::num::NonZeroU32::new(config.server.api_burst.max(1).saturating_mul(10)).unwrap_or(std::num::NonZeroU32::MIN);
        let quota = governor::Quota::with_period(period_of(per_minute))
            .unwrap_or_else(|| governor::Quota::per_second(std::num::NonZeroU32::MIN))
            .allow_burst(burst);
        let limiter = Arc::new(governor::RateLimiter::keyed(quota));
        let weak = Arc::downgrade(&limiter);
        forget_quiet_callers(move || weak.upgrade().map(|l| l.retain_recent()).is_some());
        AddressGate { limiter, trusted: config.server.trusted_proxies.clone() }
    }
}

pub async fn address_gate(
    axum::extract::State(gate): axum::extract::State<AddressGate>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    if !crate::http::api_tokens::takes_tokens(request.uri().path()) {
        return next.run(request).await;
    }
    // An IPv6 client holds a whole /64: it is one address here.
    let address = match crate::http::client_addr::of_request(&request, &gate.trusted) {
        IpAddr::V6(v6) => IpAddr::V6(std::net::Ipv6Addr::from(u128::from(v6) & !((1u128 << 64) - 1))),
        v4 => v4,
    };
    match gate.limiter.check_key(&address) {
        Ok(()) => next.run(request).await,
        Err(not_until) => {
            use governor::clock::Clock as _;
            let wait = not_until.wait_time_from(governor::clock::DefaultClock::default().now()).as_secs().max(1);
            let mut answer = super::ApiError::new(
                axum::http::StatusCode::TOO_MANY_REQUESTS,
                "Too many requests from this address; wait a moment and try again.",
            )
            .into_response();
            answer.headers_mut().insert(axum::http::header::RETRY_AFTER, axum::http::HeaderValue::from(wait));
            answer
        }
    }
}
