//! Thin binding over `kbench-agent`: `kbench agent` runs the load agent in-process through this
//! (docs/agents.md). The agent serves on napi's tokio runtime until `close`.

use kbench_agent::{AgentConfig, AgentError};
use napi::bindgen_prelude::*;
use napi_derive::napi;

#[napi(object, js_name = "AgentOptions")]
pub struct BindingAgentOptions {
    /// `host:port` to listen on; port 0 picks a free one. The CLI's default is 127.0.0.1:7755.
    pub listen: String,
    /// The secret every controller's hello must carry (required, not empty).
    pub token: String,
    /// Shown to controllers; default: this machine's host name.
    pub name: Option<String>,
    /// `host:port` targets a run may name; absent: any.
    pub allow: Option<Vec<String>>,
    /// PEM certificate chain and key files: the agent speaks TLS (both or neither).
    pub tls_cert: Option<String>,
    pub tls_key: Option<String>,
}

/// A running load agent.
#[napi(js_name = "AgentHandle")]
pub struct BindingAgentHandle {
    inner: kbench_agent::AgentHandle,
}

/// Binds and starts serving; resolves once listening. The test hook
/// `KBENCH_AGENT_TEST_CLOCK_SKEW_MS` is read from the environment here.
#[napi]
pub async fn start_agent(options: BindingAgentOptions) -> Result<BindingAgentHandle> {
    let mut config = AgentConfig::new(options.listen, options.token);
    config.name = options.name;
    config.allow = options.allow;
    config.tls = match (options.tls_cert, options.tls_key) {
        (Some(cert), Some(key)) => Some((cert.into(), key.into())),
        (None, None) => None,
        _ => {
            return Err(Error::new(
                Status::InvalidArg,
                "tlsCert and tlsKey go together",
            ))
        }
    };
    config.clock_skew_micros = AgentConfig::clock_skew_from_env().map_err(to_js_error)?;
    let inner = kbench_agent::start(config).await.map_err(to_js_error)?;
    Ok(BindingAgentHandle { inner })
}

#[napi]
impl BindingAgentHandle {
    /// `host:port` actually bound (port 0 resolved).
    #[napi(getter)]
    pub fn address(&self) -> String {
        self.inner.address().to_string()
    }

    #[napi(getter)]
    pub fn name(&self) -> String {
        self.inner.name().to_string()
    }

    /// Stops accepting, closes every connection and stops any run's clients. Idempotent.
    #[napi]
    pub async fn close(&self) {
        self.inner.close().await;
    }
}

/// A bad option is the caller's (InvalidArg, naming it); a port that cannot be bound failed.
fn to_js_error(e: AgentError) -> Error {
    let status = match e {
        AgentError::Invalid { .. } => Status::InvalidArg,
        AgentError::Listen { .. } => Status::GenericFailure,
    };
    Error::new(status, e.to_string())
}
