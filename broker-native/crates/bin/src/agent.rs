//! `kbench-agent [--listen HOST:PORT] [--token-file FILE] [--tls-cert FILE --tls-key FILE]
//!  [--name NAME] [--allow HOST:PORT,...]`: kbench's load agent without Node (docs/agents.md).
//!
//! The token comes from `--token-file` or the environment variable `KBENCH_AGENT_TOKEN`; one is
//! required. Prints `kbench agent <name> listening on HOST:PORT (protocol 1)` once listening,
//! then serves until SIGINT or SIGTERM (exit 0). Usage errors exit 2 naming the flag; an address
//! that cannot be bound exits 1.

use std::io::{Read, Write};
use std::process::ExitCode;

use kbench_agent::{AgentConfig, AgentError, DEFAULT_LISTEN, PROTOCOL_VERSION};

const USAGE: &str =
    "usage: kbench-agent [--listen HOST:PORT] [--token-file FILE] [--tls-cert FILE --tls-key FILE]
                    [--name NAME] [--allow HOST:PORT,...]

  --listen HOST:PORT    where controllers connect (default 127.0.0.1:7755, this machine only;
                        a load machine passes --listen 0.0.0.0:7755)
  --token-file FILE     the secret controllers present (or the environment variable
                        KBENCH_AGENT_TOKEN); required
  --tls-cert FILE       PEM certificate chain and key: controllers connect over TLS
  --tls-key FILE        (use TLS across an untrusted network: runs carry the target's secrets)
  --name NAME           shown to controllers (default: the host name)
  --allow HOST:PORT,... the only targets a run may send load to (default: any)";

/// A token file is a few bytes; more than this is not one.
const MAX_TOKEN_FILE_BYTES: u64 = 64 << 10;

enum Parsed {
    Run(AgentConfig),
    Help,
}

fn parse_args(
    args: impl Iterator<Item = String>,
    env_token: Option<String>,
) -> Result<Parsed, String> {
    let mut config = AgentConfig::new(DEFAULT_LISTEN, "");
    let mut token_file = None;
    let (mut tls_cert, mut tls_key) = (None, None);
    let mut args = args;
    while let Some(flag) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        match flag.as_str() {
            "--help" | "-h" => return Ok(Parsed::Help),
            "--listen" => {
                let v = value("--listen")?;
                if !v
                    .rsplit_once(':')
                    .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok())
                {
                    return Err(format!("--listen: expected HOST:PORT, not {v:?}"));
                }
                config.listen = v;
            }
            "--token-file" => token_file = Some(value("--token-file")?),
            "--tls-cert" => tls_cert = Some(value("--tls-cert")?),
            "--tls-key" => tls_key = Some(value("--tls-key")?),
            "--name" => config.name = Some(value("--name")?),
            "--allow" => {
                let list = value("--allow")?;
                config.allow = Some(AgentConfig::parse_allow(&list).map_err(flagged)?);
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    config.token = match (token_file, env_token) {
        (Some(file), _) => read_token(&file)?,
        (None, Some(token)) if !token.trim().is_empty() => token.trim().to_string(),
        (None, _) => return Err(
            "a token is required: --token-file FILE or the environment variable KBENCH_AGENT_TOKEN"
                .into(),
        ),
    };
    config.tls = match (tls_cert, tls_key) {
        (Some(cert), Some(key)) => Some((cert.into(), key.into())),
        (None, None) => None,
        _ => return Err("--tls-cert and --tls-key go together".into()),
    };
    config.clock_skew_micros = AgentConfig::clock_skew_from_env().map_err(flagged)?;
    Ok(Parsed::Run(config))
}

/// The token in `path`, read through a bound, without surrounding white space.
fn read_token(path: &str) -> Result<String, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("--token-file: {path}: {e}"))?;
    let mut text = String::new();
    file.take(MAX_TOKEN_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("--token-file: {path}: {e}"))?;
    if text.len() as u64 > MAX_TOKEN_FILE_BYTES {
        return Err(format!(
            "--token-file: {path}: longer than {MAX_TOKEN_FILE_BYTES} bytes; not a token"
        ));
    }
    let token = text.trim();
    if token.is_empty() {
        return Err(format!("--token-file: {path}: empty"));
    }
    Ok(token.to_string())
}

/// An agent option's error, named as the flag (`--allow: ...`).
fn flagged(e: AgentError) -> String {
    match e {
        AgentError::Invalid { option, message } if !option.starts_with("KBENCH_") => {
            format!("--{option}: {message}")
        }
        e => e.to_string(),
    }
}

fn main() -> ExitCode {
    let env_token = std::env::var("KBENCH_AGENT_TOKEN").ok();
    let config = match parse_args(std::env::args().skip(1), env_token) {
        Ok(Parsed::Run(config)) => config,
        Ok(Parsed::Help) => {
            // A closed pipe (`--help | head`) is no error.
            let _ = writeln!(std::io::stdout(), "{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("kbench-agent: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let runtime = tokio::runtime::Runtime::new().expect("tokio runtime");
    match runtime.block_on(serve(config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e @ AgentError::Invalid { .. }) => {
            eprintln!("kbench-agent: {}", flagged(e));
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("kbench-agent: {e}");
            ExitCode::from(1)
        }
    }
}

async fn serve(config: AgentConfig) -> Result<(), AgentError> {
    use tokio::signal::unix::{signal, SignalKind};
    let listening = |e: std::io::Error| AgentError::Listen {
        address: config.listen.clone(),
        source: e,
    };
    let mut terminate = signal(SignalKind::terminate()).map_err(listening)?;
    let mut interrupt = signal(SignalKind::interrupt()).map_err(listening)?;
    let agent = kbench_agent::start(config).await?;
    {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(
            out,
            "kbench agent {} listening on {} (protocol {PROTOCOL_VERSION})",
            agent.name(),
            agent.address()
        );
        let _ = out.flush();
    }
    tokio::select! {
        _ = terminate.recv() => {}
        _ = interrupt.recv() => {}
    }
    agent.close().await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(list: &[&str], env: Option<&str>) -> Result<AgentConfig, String> {
        let args = list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        match parse_args(args.into_iter(), env.map(String::from))? {
            Parsed::Run(config) => Ok(config),
            Parsed::Help => Err("help".into()),
        }
    }

    #[test]
    fn parses_every_flag() {
        let dir = tempfile::tempdir().unwrap();
        let token = dir.path().join("token");
        std::fs::write(&token, "  abc\n").unwrap();
        let config = parse(
            &[
                "--listen",
                "0.0.0.0:7755",
                "--token-file",
                token.to_str().unwrap(),
                "--tls-cert",
                "c.pem",
                "--tls-key",
                "k.pem",
                "--name",
                "loader-2",
                "--allow",
                "kafka-1:9092, kafka-2:9092",
            ],
            Some("from-env"),
        )
        .unwrap();
        assert_eq!(config.listen, "0.0.0.0:7755");
        assert_eq!(config.token, "abc");
        assert_eq!(config.name.as_deref(), Some("loader-2"));
        assert_eq!(
            config.allow.unwrap(),
            ["kafka-1:9092".to_string(), "kafka-2:9092".to_string()]
        );
        assert!(config.tls.is_some());
        let config = parse(&[], Some("from-env")).unwrap();
        assert_eq!(
            (config.listen.as_str(), config.token.as_str()),
            (DEFAULT_LISTEN, "from-env")
        );
        assert!(matches!(
            parse_args(["--help".to_string()].into_iter(), None),
            Ok(Parsed::Help)
        ));
    }

    #[test]
    fn usage_errors_name_the_flag() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty");
        std::fs::write(&empty, "\n").unwrap();
        let empty = empty.to_str().unwrap();
        for (args, env, expected) in [
            (&[][..], None, "--token-file"),
            (&["--token-file", empty][..], None, "--token-file: "),
            (
                &["--token-file", "/nonexistent/t"][..],
                None,
                "--token-file: ",
            ),
            (&["--listen", "7755"][..], Some("t"), "--listen: "),
            (&["--allow", "kafka"][..], Some("t"), "--allow: "),
            (&["--tls-cert", "c.pem"][..], Some("t"), "--tls-key"),
            (&["--name"][..], Some("t"), "--name needs a value"),
            (&["--colour"][..], Some("t"), "--colour"),
        ] {
            let err = parse(args, env).err().unwrap();
            assert!(err.contains(expected), "{args:?}: {err}");
        }
    }
}
