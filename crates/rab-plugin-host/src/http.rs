//! `wasi:http` for plugins. Without a network grant every request is refused
//! (`HTTP-request-denied`) before anything leaves the process. With one, requests go out
//! through the client `web_fetch` uses: only public addresses, checked by its resolver
//! when it connects (so a name that resolves to a private address, or is rebound to one,
//! gets `destination-IP-prohibited`); no redirect followed for the plugin; no proxy; and
//! the whole exchange bounded by the plugin's time limit. The grant `private-network`
//! (from the user's own settings) lets a plugin reach local services too.

use std::future::Future;
use std::time::Duration;

use http_body_util::{BodyExt, Limited};
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody, WasiHttpHooks};

/// The most a plugin may send in one request body.
const MAX_UPLOAD: usize = 16 * 1024 * 1024;

/// What a store's `wasi:http` may do.
pub(crate) struct HttpHooks {
    /// The client, when the network is granted.
    client: Option<reqwest::Client>,
    /// The plugin's time limit per call: no exchange outlives it.
    timeout: Duration,
    /// Whether private addresses may be reached.
    private: bool,
}

impl HttpHooks {
    /// Hooks for a plugin: `network` granted or not, private addresses too or not.
    pub(crate) fn new(network: bool, private: bool, timeout: Duration) -> Self {
        let client = network
            .then(|| {
                rab_tools::web_fetch::guarded_client_builder(private)
                    .and_then(|b| b.connect_timeout(timeout).build().map_err(|e| e.to_string()))
            })
            .and_then(|built| {
                built.inspect_err(|e| tracing::warn!("no HTTP client for plugins: {e}")).ok()
            });
        Self { client, timeout, private }
    }
}

type Sent = Box<
    dyn Future<
            Output = Result<
                (http::Response<WasiBody>, Box<dyn Future<Output = Result<(), Error>> + Send>),
                Error,
            >,
        > + Send,
>;

impl WasiHttpHooks for HttpHooks {
    fn send_request(
        &mut self,
        request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        fut: Box<dyn Future<Output = Result<(), Error>> + Send>,
    ) -> Sent {
        drop(fut);
        let Some(client) = self.client.clone() else {
            return Box::new(async { Err(Error::HttpRequestDenied) });
        };
        let timeout = options
            .and_then(|o| o.first_byte_timeout)
            .map_or(self.timeout, |t| t.min(self.timeout));
        // The URL as the client reads it (WHATWG rules: `2130706433`, `0x7f000001` and
        // `127.1` are all 127.0.0.1), and sent as parsed: one parser decides the host.
        // An address written as such is never looked up, so the resolver's check would
        // not see it: it is checked here, in the form the client connects to.
        let Ok(url) = reqwest::Url::parse(&request.uri().to_string()) else {
            return Box::new(async { Err(Error::HttpRequestUriInvalid) });
        };
        let literal = url.host_str().and_then(|h| {
            h.trim_start_matches('[').trim_end_matches(']').parse::<std::net::IpAddr>().ok()
        });
        if !self.private && literal.is_some_and(rab_tools::web_fetch::is_private_address) {
            return Box::new(async { Err(Error::DestinationIpProhibited) });
        }
        Box::new(async move {
            let (parts, body) = request.into_parts();
            let body = Limited::new(body, MAX_UPLOAD)
                .collect()
                .await
                .map_err(|_| Error::HttpRequestBodySize(None))?
                .to_bytes();
            let sent = client
                .request(parts.method, url)
                .headers(parts.headers)
                .body(body)
                .timeout(timeout)
                .send()
                .await
                .map_err(|e| error_of(&e))?;
            // reqwest's timeout covers reading the body too.
            let response: http::Response<reqwest::Body> = sent.into();
            let response = response.map(|b| {
                b.map_err(|e| {
                    if e.is_timeout() {
                        Error::HttpResponseTimeout
                    } else {
                        Error::HttpResponseIncomplete
                    }
                })
                .boxed_unsync()
            });
            let io: Box<dyn Future<Output = Result<(), Error>> + Send> = Box::new(async { Ok(()) });
            Ok((response, io))
        })
    }
}

/// The `wasi:http` error code for a failed request.
fn error_of(e: &reqwest::Error) -> Error {
    if rab_tools::web_fetch::is_refused_address(e) {
        Error::DestinationIpProhibited
    } else if e.is_timeout() {
        Error::ConnectionTimeout
    } else if e.is_connect() {
        Error::ConnectionRefused
    } else if e.is_builder() {
        Error::HttpRequestUriInvalid
    } else {
        Error::HttpProtocolError
    }
}
