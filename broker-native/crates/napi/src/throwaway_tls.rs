//! `throwawayTls`: a CA and a server certificate made in memory for one run's secured bundled
//! listener (a scenario's `cluster.security`), so measuring TLS needs no openssl and no files
//! a user must keep. Nothing here is stored: the run writes the key where its broker's data lives
//! and removes it with them.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};

/// A certificate names a handful of hosts (a loopback broker: 127.0.0.1, localhost).
const MAX_HOSTS: usize = 16;

#[napi(object, js_name = "ThrowawayTls")]
pub struct BindingThrowawayTls {
    /// PEM of the CA that signed `cert`: what clients trust.
    pub ca: String,
    /// PEM of the server certificate, its subjectAltNames the hosts asked for.
    pub cert: String,
    /// PEM (PKCS#8, unencrypted) of the certificate's private key.
    pub key: String,
}

fn invalid(message: String) -> Error {
    Error::new(Status::InvalidArg, message)
}

fn failed(e: rcgen::Error) -> Error {
    Error::new(Status::GenericFailure, format!("throwawayTls: {e}"))
}

/// A fresh CA (ECDSA P-256) and a server certificate it signed for `hosts` (host names or IP
/// addresses, 1 to 16 of them).
#[napi]
pub fn throwaway_tls(hosts: Vec<String>) -> Result<BindingThrowawayTls> {
    if hosts.is_empty() || hosts.len() > MAX_HOSTS {
        return Err(invalid(format!(
            "throwawayTls: hosts: give 1 to {MAX_HOSTS} host names or addresses (got {})",
            hosts.len()
        )));
    }
    if let Some(i) = hosts.iter().position(|h| h.is_empty() || h.len() > 253) {
        return Err(invalid(format!(
            "throwawayTls: hosts[{i}]: must be a host name or an IP address of 1 to 253 characters"
        )));
    }
    let ca_key = KeyPair::generate().map_err(failed)?;
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(failed)?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "kbench throwaway CA");
    let ca = ca_params.self_signed(&ca_key).map_err(failed)?;
    let issuer = Issuer::new(ca_params, ca_key);
    let key = KeyPair::generate().map_err(failed)?;
    let mut params = CertificateParams::new(hosts.clone())
        .map_err(|e| invalid(format!("throwawayTls: hosts: {e}")))?;
    params
        .distinguished_name
        .push(DnType::CommonName, hosts[0].as_str());
    let cert = params.signed_by(&key, &issuer).map_err(failed)?;
    Ok(BindingThrowawayTls {
        ca: ca.pem(),
        cert: cert.pem(),
        key: key.serialize_pem(),
    })
}
