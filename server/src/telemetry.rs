use slicehub_core::config::{Config, LogFormat};
use tracing_subscriber::EnvFilter;

/// Readable lines by default, JSON lines with `--log-json` or log.format = "json".
/// RUST_LOG, when set, replaces the configured level.
pub fn init(config: &Config, json_flag: bool) {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(&config.log.level));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let result = if json_flag || config.log.format == LogFormat::Json {
        builder.json().flatten_event(true).try_init()
    } else {
        builder.try_init()
    };
    // A second init (only possible in tests) keeps the first subscriber.
    let _ = result;
}
