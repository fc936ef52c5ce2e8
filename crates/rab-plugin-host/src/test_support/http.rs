//! The HTTP test plugin: one GET through `wasi:http`, to the host it is told.

use super::{Meta, build_world, module};

/// The part of `wasi:io` the plugin imports.
const WASI_IO: &str = r#"
package wasi:io@0.2.0;

interface poll {
  resource pollable {
    block: func();
  }
}
"#;

/// The part of `wasi:http` the plugin imports: the types of the calls it makes, written
/// to match the host's (an import's types must be the host's, case for case).
const WASI_HTTP: &str = r#"
package wasi:http@0.2.0;

interface types {
  use wasi:io/poll@0.2.0.{pollable};
  variant scheme { HTTP, HTTPS, other(string) }
  record DNS-error-payload { rcode: option<string>, info-code: option<u16> }
  record TLS-alert-received-payload { alert-id: option<u8>, alert-message: option<string> }
  record field-size-payload { field-name: option<string>, field-size: option<u32> }
  variant error-code {
    DNS-timeout, DNS-error(DNS-error-payload), destination-not-found,
    destination-unavailable, destination-IP-prohibited, destination-IP-unroutable,
    connection-refused, connection-terminated, connection-timeout,
    connection-read-timeout, connection-write-timeout, connection-limit-reached,
    TLS-protocol-error, TLS-certificate-error, TLS-alert-received(TLS-alert-received-payload),
    HTTP-request-denied, HTTP-request-length-required, HTTP-request-body-size(option<u64>),
    HTTP-request-method-invalid, HTTP-request-URI-invalid, HTTP-request-URI-too-long,
    HTTP-request-header-section-size(option<u32>),
    HTTP-request-header-size(option<field-size-payload>),
    HTTP-request-trailer-section-size(option<u32>),
    HTTP-request-trailer-size(field-size-payload), HTTP-response-incomplete,
    HTTP-response-header-section-size(option<u32>),
    HTTP-response-header-size(field-size-payload), HTTP-response-body-size(option<u64>),
    HTTP-response-trailer-section-size(option<u32>),
    HTTP-response-trailer-size(field-size-payload),
    HTTP-response-transfer-coding(option<string>),
    HTTP-response-content-coding(option<string>), HTTP-response-timeout,
    HTTP-upgrade-failed, HTTP-protocol-error, loop-detected, configuration-error,
    internal-error(option<string>),
  }
  resource fields {
    constructor();
  }
  type headers = fields;
  resource outgoing-request {
    constructor(headers: headers);
    set-path-with-query: func(path-with-query: option<string>) -> result;
    set-scheme: func(scheme: option<scheme>) -> result;
    set-authority: func(authority: option<string>) -> result;
  }
  resource request-options;
  type status-code = u16;
  resource incoming-response {
    status: func() -> status-code;
  }
  resource future-incoming-response {
    subscribe: func() -> pollable;
    get: func() -> option<result<result<incoming-response, error-code>>>;
  }
}

interface outgoing-handler {
  use types.{outgoing-request, request-options, future-incoming-response, error-code};
  handle: func(request: outgoing-request, options: option<request-options>) -> result<future-incoming-response, error-code>;
}
"#;

/// The part of `wasi:sockets` the plugin imports (to show it gets no socket).
const WASI_SOCKETS: &str = r#"
package wasi:sockets@0.2.0;

interface network {
  enum error-code {
    unknown, access-denied, not-supported, invalid-argument, out-of-memory, timeout,
    concurrency-conflict, not-in-progress, would-block, invalid-state, new-socket-limit,
    address-not-bindable, address-in-use, remote-unreachable, connection-refused,
    connection-reset, connection-aborted, datagram-too-large, name-unresolvable,
    temporary-resolver-failure, permanent-resolver-failure,
  }
  enum ip-address-family { ipv4, ipv6 }
}

interface tcp {
  resource tcp-socket;
}

interface tcp-create-socket {
  use network.{error-code, ip-address-family};
  use tcp.{tcp-socket};
  create-tcp-socket: func(address-family: ip-address-family) -> result<tcp-socket, error-code>;
}
"#;

const HTTP_WORLD: &str = r#"
package rab:plugin-test;

world http-plugin {
  include rab:plugin/rab-plugin;
  import wasi:http/outgoing-handler@0.2.0;
  import wasi:http/types@0.2.0;
  import wasi:io/poll@0.2.0;
  import wasi:sockets/tcp-create-socket@0.2.0;
}
"#;

/// `http-getter`, tool `get`: arguments exactly `{"host":"…"}` (see [`host_args`]);
/// GETs `http://HOST/` and returns `status NNN`, or `error-code NN` (the number of the
/// `wasi:http` error: 4 destination-IP-prohibited, 15 HTTP-request-denied, …). A tool
/// whose name starts with `t` (not declared) makes a TCP socket instead: `created`, or
/// the `wasi:sockets` error (`error-code 01`: access-denied).
const HTTP_IMPORTS: &str = r#"
  (import "wasi:http/types@0.2.0" "[constructor]fields" (func $fields (result i32)))
  (import "wasi:http/types@0.2.0" "[constructor]outgoing-request"
    (func $request (param i32) (result i32)))
  (import "wasi:http/types@0.2.0" "[method]outgoing-request.set-scheme"
    (func $set_scheme (param i32 i32 i32 i32 i32) (result i32)))
  (import "wasi:http/types@0.2.0" "[method]outgoing-request.set-authority"
    (func $set_authority (param i32 i32 i32 i32) (result i32)))
  (import "wasi:http/types@0.2.0" "[method]outgoing-request.set-path-with-query"
    (func $set_path (param i32 i32 i32 i32) (result i32)))
  (import "wasi:http/types@0.2.0" "[method]future-incoming-response.subscribe"
    (func $subscribe (param i32) (result i32)))
  (import "wasi:http/types@0.2.0" "[method]future-incoming-response.get"
    (func $get (param i32 i32)))
  (import "wasi:http/types@0.2.0" "[method]incoming-response.status"
    (func $status (param i32) (result i32)))
  (import "wasi:http/outgoing-handler@0.2.0" "handle"
    (func $handle (param i32 i32 i32 i32)))
  (import "wasi:io/poll@0.2.0" "[method]pollable.block" (func $block (param i32)))
  (import "wasi:sockets/tcp-create-socket@0.2.0" "create-tcp-socket"
    (func $tcp (param i32 i32)))
"#;

const HTTP_BODY: &str = r#"
  (data (i32.const 2400) "status ")
  (data (i32.const 2500) "created")
  (data (i32.const 700) "/")
  (func (export "execute-tool")
    (param $np i32) (param $nl i32) (param $cp i32) (param $cl i32) (param $ap i32) (param $al i32)
    (result i32)
    (local $req i32) (local $future i32) (local $status i32)
    ;; t…: create-tcp-socket(ipv4) -> result<socket, error-code> at 3200 (payload at 3204)
    (if (i32.eq (i32.load8_u (local.get $np)) (i32.const 116))
      (then
        (call $tcp (i32.const 0) (i32.const 3200))
        (if (i32.load8_u (i32.const 3200)) (then (return (call $fail (i32.const 3204)))))
        (i32.store8 (i32.const 1060) (i32.const 0))
        (i32.store (i32.const 1064) (i32.const 2500))
        (i32.store (i32.const 1068) (i32.const 7))
        (return (i32.const 1060))))
    (local.set $req (call $request (call $fields)))
    ;; Some(HTTP), Some(host), Some("/"); the host is the arguments `{"host":"…"}`
    ;; without their first 9 and last 2 bytes.
    (drop (call $set_scheme (local.get $req) (i32.const 1) (i32.const 0) (i32.const 0) (i32.const 0)))
    (drop (call $set_authority (local.get $req) (i32.const 1)
      (i32.add (local.get $ap) (i32.const 9)) (i32.sub (local.get $al) (i32.const 11))))
    (drop (call $set_path (local.get $req) (i32.const 1) (i32.const 700) (i32.const 1)))
    ;; handle(request, None) -> result<future, error-code> at 3000 (payload at 3008)
    (call $handle (local.get $req) (i32.const 0) (i32.const 0) (i32.const 3000))
    (if (i32.load8_u (i32.const 3000)) (then (return (call $fail (i32.const 3008)))))
    (local.set $future (i32.load (i32.const 3008)))
    (call $block (call $subscribe (local.get $future)))
    ;; get -> option<result<result<response, error-code>>> at 3104 (8-aligned): the
    ;; option's tag at 3104, the outer result's at 3112, the inner one's at 3120, its
    ;; payload at 3128.
    (call $get (local.get $future) (i32.const 3104))
    (if (i32.load8_u (i32.const 3120)) (then (return (call $fail (i32.const 3128)))))
    (local.set $status (call $status (i32.load (i32.const 3128))))
    (i32.store8 (i32.const 2407) (i32.add (i32.const 48) (i32.div_u (local.get $status) (i32.const 100))))
    (i32.store8 (i32.const 2408)
      (i32.add (i32.const 48) (i32.rem_u (i32.div_u (local.get $status) (i32.const 10)) (i32.const 10))))
    (i32.store8 (i32.const 2409) (i32.add (i32.const 48) (i32.rem_u (local.get $status) (i32.const 10))))
    (i32.store8 (i32.const 1060) (i32.const 0))
    (i32.store (i32.const 1064) (i32.const 2400))
    (i32.store (i32.const 1068) (i32.const 10))
    (i32.const 1060))
"#;

/// The arguments the HTTP plugin reads: `{"host":"…"}`.
pub fn host_args(host: &str) -> String {
    serde_json::json!({ "host": host }).to_string()
}

/// The HTTP test plugin (see `HTTP_BODY`) as a component importing `wasi:http`.
pub fn http_component() -> Vec<u8> {
    let meta = Meta {
        name: "http-getter",
        tool: "get",
        description: "GETs a host",
        level: "network",
        message: "no commands",
    };
    let wat = module(HTTP_IMPORTS, &meta, HTTP_BODY);
    build_world(&wat, &[WASI_IO, WASI_HTTP, WASI_SOCKETS, HTTP_WORLD], "http-plugin")
}
