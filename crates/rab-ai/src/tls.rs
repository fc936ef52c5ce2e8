//! TLS: rustls with ring and the platform's root certificates, loaded lazily.
//!
//! Loading the system roots reads and parses every file in the certificate store
//! (tens of milliseconds); doing it when the HTTP client is built would charge every
//! run, even one that only talks to a local server over plain HTTP. The verifier below
//! loads them on the first TLS handshake instead, and [`warm_up`] lets a caller start
//! that load in the background as soon as it knows an https request is coming.

use std::sync::{Arc, OnceLock};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};

type Loaded = Result<Arc<rustls_platform_verifier::Verifier>, rustls::Error>;

/// A certificate verifier that builds the platform verifier on first use.
#[derive(Debug)]
pub(crate) struct LazyVerifier {
    provider: Arc<CryptoProvider>,
    inner: OnceLock<Loaded>,
}

impl LazyVerifier {
    pub(crate) fn new(provider: Arc<CryptoProvider>) -> Self {
        Self { provider, inner: OnceLock::new() }
    }

    fn get(&self) -> Result<&Arc<rustls_platform_verifier::Verifier>, rustls::Error> {
        self.inner
            .get_or_init(|| {
                rustls_platform_verifier::Verifier::new(self.provider.clone()).map(Arc::new)
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Loads the roots now (call from a background thread).
    pub(crate) fn warm_up(&self) {
        let _ = self.get();
    }
}

impl ServerCertVerifier for LazyVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.get()?.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.get()?.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.get()?.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        // Answerable from the crypto provider alone, so building a ClientHello does not
        // force the roots to load.
        self.provider.signature_verification_algorithms.supported_schemes()
    }
}

/// A rustls client configuration over ring with the lazy platform verifier.
pub(crate) fn client_config() -> Result<(rustls::ClientConfig, Arc<LazyVerifier>), String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = Arc::new(LazyVerifier::new(provider.clone()));
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("cannot set up TLS: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(verifier.clone())
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok((config, verifier))
}

/// A reqwest client builder on rab's one TLS stack (rustls with ring, the platform's
/// roots loaded on the first handshake, HTTP/1.1), with rab's user agent and a 30 s
/// connect timeout. Every HTTP client in rab starts here (providers, web_fetch, MCP);
/// callers add what is theirs (redirect policy, DNS resolver, timeouts).
pub fn http_client_builder() -> Result<reqwest::ClientBuilder, String> {
    let (tls, _) = client_config()?;
    Ok(reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .user_agent(concat!("rab/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(std::time::Duration::from_secs(30)))
}
