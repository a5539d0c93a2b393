use std::future::IntoFuture;
use std::sync::Arc;

use axum::extract::FromRef;
use axum::routing::{any, get};
use axum::serve::ListenerExt;
use axum::Router;
use leptos::config::LeptosOptions;
use leptos::prelude::provide_context;
use leptos_axum::{generate_route_list, LeptosRoutes};
use slicehub_app::{shell, App};
use slicehub_core::config::Config;
use slicehub_core::Services;
use tokio_util::sync::CancellationToken;
use tower_http::trace::TraceLayer;

use crate::error::CliError;
use crate::http::handlers::{audit_csv, healthz, lti_launch, metrics, oidc_sign_in, report_csv, session_events, usage_csv};
use crate::http::{api_errors, caller, csrf, form_fields, security_headers};
use crate::{proxy, startup};

/// How long open requests may take to finish after SIGTERM or Ctrl-C.
const GRACE: std::time::Duration = std::time::Duration::from_secs(4);
/// How long the background tasks may take to reach their next pause at shutdown.
const TASKS_STOP_WITHIN: std::time::Duration = std::time::Duration::from_secs(2);

#[derive(Clone, FromRef)]
pub struct AppState {
    pub leptos_options: LeptosOptions,
    pub services: Services,
    /// The notebook proxy's connection pool.
    pub upstream: proxy::Upstream,
    /// Notebook requests admitted a moment ago (see `proxy::Admitted`).
    pub admitted: proxy::Admitted,
    /// Cancelled when the portal begins to shut down: long-lived answers (event streams)
    /// end then, so open browser tabs cannot hold the shutdown up.
    pub shutdown: CancellationToken,
    pub event_streams: session_events::OpenStreams,
    /// Each person's sessions as their page shows them, shared by the page's reads and its
    /// event stream.
    pub session_reads: slicehub_app::api::session_reads::SessionReads,
    /// The `[oidc.NAME]` providers.
    pub oidc: slicehub_sign_in::oidc::OidcProviders,
    /// LMS platforms' published keys, and the client they and their rosters are read with.
    pub lti_keys: Arc<slicehub_sign_in::lti::PlatformKeys>,
    pub lti_http: reqwest::Client,
    /// Courses whose LMS roster is being read in the background now.
    pub lti_syncing: crate::lms_roster::Syncing,
    /// Event streams each person holds open through the APIs.
    pub api_streams: crate::api_v1::streams::PerPerson,
}

pub fn router(services: Services, oidc: slicehub_sign_in::oidc::OidcProviders, shutdown: CancellationToken) -> Router {
    let config = &services.config;
    let leptos_options = LeptosOptions::builder()
        .output_name(Arc::<str>::from("slicehub"))
        .site_root(Arc::<str>::from(
            config.server.site_root.to_string_lossy().as_ref(),
        ))
        .site_pkg_dir(Arc::<str>::from("pkg"))
        .site_addr(config.server.bind)
        .build();
    let state = AppState {
        leptos_options: leptos_options.clone(),
        services: services.clone(),
        upstream: proxy::Upstream::default(),
        admitted: proxy::Admitted::following(&services.sessions),
        shutdown,
        event_streams: session_events::OpenStreams::default(),
        session_reads: slicehub_app::api::session_reads::SessionReads::default(),
        oidc,
        lti_keys: Arc::default(),
        lti_http: slicehub_sign_in::oidc::http_client().unwrap_or_default(),
        lti_syncing: crate::lms_roster::Syncing::default(),
        api_streams: crate::api_v1::streams::PerPerson::default(),
    };
    let routes = generate_route_list(App);
    let api_limit = crate::api_v1::rate_limit::layer(config);
    let notebook_hosts = proxy::notebook_host::Dispatch {
        access: services.notebooks.clone(),
        router: proxy::notebook_host::router(state.clone()),
    };
    Router::new()
        .route("/healthz", get(healthz::healthz))
        .route(metrics::PATH, get(metrics::scrape))
        .route(session_events::PATH, get(session_events::events))
        .route(usage_csv::PATH, get(usage_csv::download))
        .route(report_csv::PATH, get(report_csv::download))
        .route(audit_csv::PATH, get(audit_csv::download))
        .route("/user/{*rest}", any(proxy::door))
        .route("/login/oidc/{name}", get(oidc_sign_in::begin))
        .route("/login/oidc/{name}/callback", get(oidc_sign_in::callback))
        .route("/login/oidc/{name}/link", axum::routing::post(oidc_sign_in::link))
        .route("/logout/oidc/{name}", get(oidc_sign_in::end_session))
        .route("/lti/login", get(lti_launch::login_get).post(lti_launch::login_post))
        .route("/lti/launch", axum::routing::post(lti_launch::launch))
        .route("/lti/continue", get(lti_launch::continue_page).post(lti_launch::continue_launch))
        .route("/lti/jwks", get(lti_launch::jwks))
        .nest(crate::api_v1::PREFIX, crate::api_v1::router(api_limit.clone()))
        .merge(crate::hub_api::router().layer(api_limit).layer(axum::middleware::from_fn(crate::api_v1::json_errors)))
        .nest_service("/pkg", site_assets(&config.server.site_root.join("pkg")))
        .leptos_routes_with_context(
            &state,
            routes,
            {
                let services = services.clone();
                let reads = state.session_reads.clone();
                let oidc = state.oidc.clone();
                move || {
                    provide_context(services.clone());
                    provide_context(reads.clone());
                    provide_context(oidc.clone());
                }
            },
            {
                let options = leptos_options.clone();
                move || shell(options.clone())
            },
        )
        .fallback(leptos_axum::file_and_error_handler::<AppState, _>(shell))
        // Inside `plain`, so its refusals reach the portal's own browser code as errors.
        .layer(axum::middleware::from_fn(form_fields::checked))
        .layer(axum::middleware::from_fn(api_errors::plain))
        .layer(axum::extract::DefaultBodyLimit::max(api_errors::BODY_LIMIT))
        .layer(axum::middleware::from_fn_with_state(
            services.clone(),
            caller::resolve,
        ))
        .layer(axum::middleware::from_fn_with_state(
            crate::api_v1::rate_limit::AddressGate::new(config),
            crate::api_v1::rate_limit::address_gate,
        ))
        .layer(axum::middleware::from_fn(csrf::same_origin_only))
        .layer(security_headers::layer())
        .layer(TraceLayer::new_for_http())
        .layer(axum::middleware::from_fn_with_state(
            notebook_hosts,
            proxy::notebook_host::dispatch,
        ))
        .with_state(state)
}

/// The wasm bundle, its script and the stylesheet: the brotli or gzip copy the release
/// build made beside each file when the browser takes it (2.7 MB of wasm is about 0.7 MB as
/// brotli), and `no-cache` with `Last-Modified`, so a browser asks each visit and gets a
/// 304 until the portal is built again (the names carry no hash).
fn site_assets(dir: &std::path::Path) -> axum::routing::MethodRouter {
    let files = tower_http::services::ServeDir::new(dir)
        .precompressed_br()
        .precompressed_gzip();
    axum::routing::get_service(files).layer(tower_http::set_header::SetResponseHeaderLayer::overriding(
        axum::http::header::CACHE_CONTROL,
        axum::http::HeaderValue::from_static("no-cache"),
    ))
}

pub async fn run(config: Config) -> Result<(), CliError> {
    let bind = config.server.bind;
    for warning in crate::deployment::check(&config)? {
        tracing::warn!("{warning}");
    }
    let services = startup::build_services(config).await?;
    startup::announce_first_admin(&services.auth, &services.config.data_dir).await?;
    services
        .store
        .audit(
            "system",
            "portal.start",
            "instance",
            env!("CARGO_PKG_VERSION"),
        )
        .await?;
    let engine = services.engine.probe().await;
    if engine.reachable {
        tracing::info!(
            version = engine.version.as_deref().unwrap_or("?"),
            api = engine.api_version.as_deref().unwrap_or("?"),
            "Docker engine reachable"
        );
    } else {
        tracing::warn!(
            reason = engine.reason.as_deref().unwrap_or("?"),
            "Docker engine unavailable; the portal runs, but cannot start sessions until it is back"
        );
    }

    let listener = tokio::net::TcpListener::bind(bind)
        .await
        .map_err(|e| CliError::Io(format!("cannot listen on {bind}: {e}")))?;
    let local = listener
        .local_addr()
        .map_err(|e| CliError::Io(e.to_string()))?;
    // Small writes (kernel messages through the proxy) go out at once instead of waiting
    // for the peer's delayed ACK (40 ms per round trip otherwise).
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    tracing::info!(
        url = %format!("http://{local}"),
        database = services.store.kind().label(),
        gpus = %services.gpus.describe(),
        "SliceHub is listening"
    );
    let oidc = crate::sign_in::oidc_providers(&services).await?;
    crate::sign_in::check_directory(&services.config);
    let tasks = services.sessions.start_background().await;
    let store = services.store.clone();
    let sessions = services.sessions.clone();
    let shutdown = CancellationToken::new();
    let app = router(services, oidc, shutdown.clone())
        .into_make_service_with_connect_info::<std::net::SocketAddr>();
    let signalled = {
        let shutdown = shutdown.clone();
        async move {
            shutdown_signal().await;
            shutdown.cancel();
        }
    };
    let server = axum::serve(listener, app).with_graceful_shutdown(signalled);
    // Open requests get 5 s to finish once the signal came; then the portal stops anyway
    // (running sessions are not touched: the next start adopts them).
    let overdue = async {
        shutdown.cancelled().await;
        tokio::time::sleep(GRACE).await;
    };
    tokio::select! {
        served = server.into_future() => {
            served.map_err(|e| CliError::Io(format!("server error: {e}")))?;
        }
        () = overdue => tracing::warn!("requests still open {} s after the signal; stopping anyway", GRACE.as_secs()),
    }
    // In order: nothing new is placed, the background tasks end (each at its next pause),
    // the launches and stops under way get a moment, then the database closes.
    sessions.never_dispatch();
    tasks.shut_down(TASKS_STOP_WITHIN).await;
    sessions.shut_down().await;
    if tokio::time::timeout(std::time::Duration::from_secs(2), store.close()).await.is_err() {
        tracing::warn!("the database did not let go of its connections within 2 s; stopping anyway");
    }
    tracing::info!("stopped cleanly");
    Ok(())
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        () = ctrl_c => tracing::info!("interrupt received; finishing open requests"),
        () = terminate => tracing::info!("SIGTERM received; finishing open requests"),
    }
}
