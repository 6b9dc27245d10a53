//! A tiny HTTP/1.1 server on a loopback port, one thread per connection, `Connection: close`.
//! Tests give it a handler; it records every request so tests can assert what was asked.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    /// Path with query, as sent.
    pub target: String,
    /// Lower-cased header names.
    pub headers: BTreeMap<String, String>,
    pub body: Vec<u8>,
}

impl Request {
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or("")
    }
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }
}

pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// After `body`: this many copies of one byte, written in chunks, then a suffix — so a test
    /// can send more than it could hold (a reader must stop on its own).
    pub filler: Option<(u8, u64, Vec<u8>)>,
}

impl Response {
    pub fn new(status: u16, body: impl Into<Vec<u8>>) -> Response {
        Response { status, headers: Vec::new(), body: body.into(), filler: None }
    }
    /// `prefix`, `len` copies of `byte` (never held in memory at once), then `suffix`.
    pub fn filled(status: u16, prefix: &str, byte: u8, len: u64, suffix: &str) -> Response {
        Response { filler: Some((byte, len, suffix.as_bytes().to_vec())), ..Response::new(status, prefix) }
    }
    pub fn header(mut self, name: &str, value: &str) -> Response {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }
}

type Handler = dyn Fn(&Request) -> Response + Send + Sync;

pub struct Server {
    pub port: u16,
    pub requests: Arc<Mutex<Vec<Request>>>,
}

impl Server {
    pub fn start(handler: impl Fn(&Request) -> Response + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let handler: Arc<Handler> = Arc::new(handler);
        let log = requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let handler = handler.clone();
                let log = log.clone();
                std::thread::spawn(move || serve(stream, &*handler, &log));
            }
        });
        Server { port, requests }
    }

    pub fn base(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }
}

fn serve(stream: TcpStream, handler: &Handler, log: &Mutex<Vec<Request>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let target = parts.next().unwrap_or("").to_string();
    let mut headers = BTreeMap::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" || h == "\n" {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    let length: usize = headers.get("content-length").and_then(|v| v.parse().ok()).unwrap_or(0);
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    let request = Request { method, target, headers, body };
    log.lock().unwrap().push(request.clone());
    let response = handler(&request);
    let mut out = stream;
    let filler_len = response.filler.as_ref().map_or(0, |(_, len, suffix)| len + suffix.len() as u64);
    let length = response.body.len() as u64 + filler_len;
    let mut head = format!("HTTP/1.1 {} X\r\nContent-Length: {length}\r\nConnection: close\r\n", response.status);
    for (k, v) in &response.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let _ = out.write_all(head.as_bytes());
    let _ = out.write_all(&response.body);
    if let Some((byte, len, suffix)) = &response.filler {
        // Stops when the client hangs up, as a bounded reader does.
        let chunk = vec![*byte; 64 * 1024];
        let mut left = *len;
        while left > 0 {
            let n = left.min(chunk.len() as u64) as usize;
            if out.write_all(&chunk[..n]).is_err() {
                return;
            }
            left -= n as u64;
        }
        let _ = out.write_all(suffix);
    }
    let _ = out.flush();
}
