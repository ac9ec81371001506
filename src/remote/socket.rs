// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! One WebSocket connection to the server: blocking, with timeouts, text
//! frames only.

use std::io::ErrorKind;
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use tungstenite::client::IntoClientRequest;
use tungstenite::http::header::{HeaderValue, AUTHORIZATION};
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

use super::protocol::Event;
use super::Error;

/// How long a TCP connect may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// What a read gave.
pub enum Read {
    Event(Event),
    /// Nothing within the time asked for.
    Nothing,
    /// The connection is gone.
    Closed(String),
}

pub struct Socket {
    ws: WebSocket<MaybeTlsStream<TcpStream>>,
    /// The TCP stream under the (maybe TLS) stream, for its timeouts.
    tcp: TcpStream,
    read_timeout: Option<Duration>,
}

/// Whether `host` is this machine, where a key in clear text stays.
fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Where a checked URL leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// In lower case.
    pub host: String,
    pub port: u16,
    /// wss:// (TLS).
    pub secure: bool,
}

/// Checks `url` before anything is sent, and gives where it leads.
pub fn check_url(url: &str, with_key: bool) -> Result<Endpoint, Error> {
    let bad = |reason: &str| Error::BadUrl {
        url: url.to_owned(),
        reason: reason.to_owned(),
    };
    let request = url.into_client_request().map_err(|e| bad(&e.to_string()))?;
    let uri = request.uri();
    let secure = match uri.scheme_str() {
        Some("ws") => false,
        Some("wss") => true,
        _ => return Err(bad("the scheme must be ws:// or wss://")),
    };
    let host = uri
        .host()
        .ok_or_else(|| bad("it has no host"))?
        .to_ascii_lowercase();
    let port = uri.port_u16().unwrap_or(if secure { 443 } else { 80 });
    if with_key && !secure && !is_loopback(&host) {
        return Err(Error::KeyInTheClear {
            url: url.to_owned(),
        });
    }
    Ok(Endpoint { host, port, secure })
}

fn unreachable(url: &str, detail: impl std::fmt::Display) -> Error {
    Error::Unreachable {
        url: url.to_owned(),
        detail: detail.to_string(),
    }
}

fn connect_tcp(url: &str, host: &str, port: u16) -> Result<TcpStream, Error> {
    let addrs = (host, port)
        .to_socket_addrs()
        .map_err(|e| unreachable(url, format!("cannot resolve {host}: {e}")))?;
    let mut last = None;
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT) {
            Ok(tcp) => return Ok(tcp),
            Err(e) => last = Some(e),
        }
    }
    Err(unreachable(
        url,
        last.map_or_else(|| format!("{host} has no address"), |e| e.to_string()),
    ))
}

impl Socket {
    /// Connects to `url` and upgrades to a WebSocket (TLS with the
    /// system's roots for wss://), sending the key as a bearer token.
    pub fn connect(url: &str, key: Option<&str>, io_timeout: Duration) -> Result<Socket, Error> {
        let Endpoint { host, port, .. } = check_url(url, key.is_some())?;
        let tcp = connect_tcp(url, &host, port)?;
        let _ = tcp.set_nodelay(true);
        let io_error = |e: std::io::Error| unreachable(url, e);
        tcp.set_read_timeout(Some(io_timeout)).map_err(io_error)?;
        tcp.set_write_timeout(Some(io_timeout)).map_err(io_error)?;
        let handle = tcp.try_clone().map_err(io_error)?;
        let mut request = url.into_client_request().map_err(|e| unreachable(url, e))?;
        if let Some(key) = key {
            let mut value =
                HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| Error::BadUrl {
                    url: url.to_owned(),
                    reason: "the API key has characters an HTTP header cannot carry".into(),
                })?;
            value.set_sensitive(true);
            request.headers_mut().insert(AUTHORIZATION, value);
        }
        let (ws, _response) = tungstenite::client_tls_with_config(request, tcp, None, None)
            .map_err(|e| match e {
                tungstenite::HandshakeError::Failure(e) => handshake_error(url, e),
                // Blocking I/O with timeouts: a handshake cut short by one.
                tungstenite::HandshakeError::Interrupted(_) => {
                    unreachable(url, "the WebSocket handshake timed out")
                }
            })?;
        Ok(Socket {
            ws,
            tcp: handle,
            read_timeout: Some(io_timeout),
        })
    }

    pub fn send(&mut self, text: String) -> Result<(), String> {
        self.ws
            .send(Message::text(text))
            .map_err(|e| format!("sending failed: {e}"))
    }

    /// Reads one frame, waiting at most `timeout`. Pings are answered by
    /// the library; binary and other frames come back as garbage.
    pub fn read(&mut self, timeout: Duration) -> Read {
        let timeout = timeout.max(Duration::from_millis(1));
        if self.read_timeout != Some(timeout) {
            if let Err(e) = self.tcp.set_read_timeout(Some(timeout)) {
                return Read::Closed(e.to_string());
            }
            self.read_timeout = Some(timeout);
        }
        match self.ws.read() {
            Ok(Message::Text(text)) => Read::Event(Event::parse(text.as_str())),
            Ok(Message::Binary(_)) => Read::Event(Event::Garbage),
            Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_)) => Read::Nothing,
            Ok(Message::Close(frame)) => Read::Closed(match frame {
                Some(f) => format!("the server closed the connection ({} {})", f.code, f.reason),
                None => "the server closed the connection".into(),
            }),
            Err(tungstenite::Error::Io(e))
                if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) =>
            {
                Read::Nothing
            }
            Err(tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed) => {
                Read::Closed("the connection closed".into())
            }
            Err(tungstenite::Error::Utf8) => Read::Event(Event::Garbage),
            Err(e) => Read::Closed(e.to_string()),
        }
    }

    /// Closes the connection without waiting for the server.
    pub fn close(mut self) {
        let _ = self.ws.close(None);
        let _ = self.ws.flush();
        let _ = self.tcp.shutdown(std::net::Shutdown::Both);
    }
}

fn handshake_error(url: &str, e: tungstenite::Error) -> Error {
    match e {
        tungstenite::Error::Http(response) => {
            let status = response.status().as_u16();
            if status == 401 || status == 403 {
                return Error::Unauthorized {
                    url: url.to_owned(),
                    status,
                };
            }
            let body = response
                .body()
                .as_deref()
                .map(|b| String::from_utf8_lossy(b).chars().take(200).collect())
                .unwrap_or_default();
            Error::Refused {
                url: url.to_owned(),
                status,
                body,
            }
        }
        e => unreachable(url, e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_goes_in_clear_text_only_to_this_machine() {
        for url in [
            "ws://127.0.0.1:8000/v1/realtime",
            "ws://localhost:8000/v1/realtime",
            "ws://[::1]:8000/v1/realtime",
            "wss://gpu-box:8000/v1/realtime",
        ] {
            assert!(check_url(url, true).is_ok(), "{url}");
        }
        let refused = check_url("ws://gpu-box:8000/v1/realtime", true);
        assert!(matches!(refused, Err(Error::KeyInTheClear { .. })));
        assert!(check_url("ws://gpu-box:8000/v1/realtime", false).is_ok());
    }

    #[test]
    fn only_websocket_urls_are_taken() {
        for url in ["http://host/v1/realtime", "gpu-box:8000", ""] {
            assert!(
                matches!(check_url(url, false), Err(Error::BadUrl { .. })),
                "{url}"
            );
        }
    }
}
