//! A network namespace the harness makes for one control plane that serves admission webhooks,
//! and the loopback proxy that lets the host's clients reach it.
//!
//! Why: the API server calls a webhook at the address of its Service's endpoints
//! (`--enable-aggregator-routing=true`), and an EndpointSlice may not hold a loopback address; a
//! controller's webhook server binds `:9443` on every interface. The only addresses allowed here
//! are loopback ones and those inside namespaces the harness makes itself. So etcd,
//! kube-apiserver, kube-controller-manager and the controllers the stand-in runs share one fresh
//! network namespace whose `lo` also carries [`POD_IP`] (the source of its routes to the Pods),
//! each controller Pod gets a namespace of its own joined to it, and nothing binds on the host but
//! the proxy.
//!
//! - [`Netns::create`]: a thread unshares a new network namespace (we run as root), brings its
//!   `lo` up with [`POD_IP`], keeps a handle to it, and then dials connections from inside it on
//!   request ([`Netns::connect`]) — readiness probes of servers that live there.
//! - [`Netns::enter_on_exec`]: a child process joins it before `exec` (`setns`).
//! - [`Proxy`]: a listener on the host's `127.0.0.1:PORT` that copies each connection to the same
//!   port on the namespace's `127.0.0.1`, where the API server listens: so `https://127.0.0.1:PORT`
//!   names the API server both on the host (kubectl, Helm, `trainer-audit`, the stand-in and its
//!   hook Pods) and inside the namespace (kube-controller-manager, the controllers).
//!
//! - [`Netns::pod_network`]: each controller Pod (they all bind `:9443`, `:8081`, `:8443`, and a
//!   rollout runs the old and the new Pod of one controller side by side until the new one is
//!   Ready) gets a network namespace of its own ([`PodNetwork`]) with its own Pod IP
//!   (`10.244.0.3`, …) on an `eth0`, joined to the control plane's namespace by a veth pair whose
//!   both ends live in harness namespaces, with a /32 route each way; the API server reaches its
//!   webhook server over that pair. Its loopback carries a proxy of the API server's port, so the
//!   in-cluster address `127.0.0.1:PORT` the stand-in gives every Pod is right there too.
//!
//! None of this changes what a client sees: the same API server, certificate and port.
#![expect(unsafe_code, reason = "a private network namespace needs libc (unshare, gettid)")]

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// The address on the control plane namespace's `lo` that its routes to the Pods start from.
pub const POD_IP: &str = "10.244.0.2";

/// What the namespace's thread does on request: sockets made there live in the namespace.
enum Request {
    Dial(SocketAddr, Duration, mpsc::Sender<std::io::Result<TcpStream>>),
    Bind(SocketAddr, mpsc::Sender<std::io::Result<TcpListener>>),
}

/// A network namespace made by the harness; gone when this handle and every process in it are.
#[derive(Debug)]
pub struct Netns {
    handle: File,
    /// The thread that unshared it (its id names the namespace to `ip link … netns`).
    tid: i32,
    requests: Mutex<mpsc::Sender<Request>>,
    /// Namespaces of their own for controller Pods, by Pod UID ([`Netns::pod_network`]), and how
    /// many were made (the next Pod IP).
    made: Mutex<usize>,
    pods: Mutex<BTreeMap<String, Arc<PodNetwork>>>,
}

impl std::fmt::Debug for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Request::Dial(addr, ..) => write!(f, "Dial({addr})"),
            Request::Bind(addr, _) => write!(f, "Bind({addr})"),
        }
    }
}

/// A controller's network: a namespace of its own with `ip` on `eth0`, joined to the control
/// plane's by a veth pair, and the API server's port proxied onto its loopback.
#[derive(Debug)]
pub struct PodNetwork {
    pub netns: Arc<Netns>,
    pub ip: String,
    _api: Proxy,
}

impl Netns {
    /// Makes the namespace, with `lo` up and carrying [`POD_IP`].
    pub fn create() -> std::io::Result<Netns> {
        let netns = Self::unshare()?;
        netns.run(Command::new("ip").args(["addr", "add", &format!("{POD_IP}/32"), "dev", "lo"]))?;
        Ok(netns)
    }

    /// A new namespace with `lo` up.
    fn unshare() -> std::io::Result<Netns> {
        let (ready_tx, ready_rx) = mpsc::channel::<std::io::Result<(File, i32)>>();
        let (request_tx, request_rx) = mpsc::channel::<Request>();
        std::thread::Builder::new().name("testkit-netns".into()).spawn(move || {
            // SAFETY: unshare affects this thread only (CLONE_NEWNET is per task).
            if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
                let _ = ready_tx.send(Err(std::io::Error::last_os_error()));
                return;
            }
            // SAFETY: gettid has no preconditions.
            let tid = unsafe { libc::gettid() };
            let _ = ready_tx.send(File::open("/proc/thread-self/ns/net").map(|f| (f, tid)));
            // Sockets created on this thread live in the namespace.
            for request in request_rx {
                match request {
                    Request::Dial(addr, timeout, reply) => {
                        let _ = reply.send(TcpStream::connect_timeout(&addr, timeout));
                    }
                    Request::Bind(addr, reply) => {
                        let _ = reply.send(TcpListener::bind(addr));
                    }
                }
            }
        })?;
        let (handle, tid) = ready_rx.recv().map_err(|_| std::io::Error::other("the netns thread died"))??;
        let netns = Netns { handle, tid, requests: Mutex::new(request_tx), pods: Mutex::new(BTreeMap::new()), made: Mutex::new(0) };
        netns.run(Command::new("ip").args(["link", "set", "lo", "up"]))?;
        Ok(netns)
    }

    /// The network of the controller Pod `pod` (its UID): its own namespace, made on first use
    /// with the next Pod IP (`10.244.0.3`, `10.244.0.4`, … never reused) and kept for its restarts
    /// until [`Self::release`]. `api_port` is the API server's port, proxied onto the new
    /// namespace's loopback.
    pub fn pod_network(&self, pod: &str, api_port: u16) -> std::io::Result<Arc<PodNetwork>> {
        let mut pods = self.pods.lock().map_err(|_| std::io::Error::other("the pod network lock is poisoned"))?;
        if let Some(network) = pods.get(pod) {
            return Ok(network.clone());
        }
        let index = {
            let mut made = self.made.lock().map_err(|_| std::io::Error::other("the pod network lock is poisoned"))?;
            *made += 1;
            *made
        };
        let ip = format!("10.244.0.{}", 2 + index);
        let key = pod;
        let pod = Arc::new(Self::unshare()?);
        let veth = format!("vpod{index}");
        // Both ends made here, the peer moved into the Pod's namespace as its eth0.
        self.run(Command::new("ip").args(["link", "add", &veth, "type", "veth", "peer", "name", "eth0", "netns", &pod.tid.to_string()]))?;
        self.run(Command::new("ip").args(["link", "set", &veth, "up"]))?;
        self.run(Command::new("ip").args(["route", "add", &format!("{ip}/32"), "dev", &veth, "src", POD_IP]))?;
        pod.run(Command::new("ip").args(["addr", "add", &format!("{ip}/32"), "dev", "eth0"]))?;
        pod.run(Command::new("ip").args(["link", "set", "eth0", "up"]))?;
        pod.run(Command::new("ip").args(["route", "add", &format!("{POD_IP}/32"), "dev", "eth0", "src", &ip]))?;
        let listener = pod.bind(SocketAddr::from(([127, 0, 0, 1], api_port)))?;
        let dialer = self.dialer()?;
        let api = Proxy::serve(listener, api_port, dialer)?;
        let network = Arc::new(PodNetwork { netns: pod, ip, _api: api });
        pods.insert(key.to_string(), network.clone());
        Ok(network)
    }

    /// Forgets the network of a Pod that is gone: its namespace (and the veth pair with it) goes
    /// once no process is left in it.
    pub fn release(&self, pod: &str) {
        if let Ok(mut pods) = self.pods.lock() {
            pods.remove(pod);
        }
    }

    /// A function dialing from inside this namespace, for a proxy (holds the request channel,
    /// not the namespace).
    fn dialer(&self) -> std::io::Result<Dialer> {
        let sender = self.requests.lock().map_err(|_| std::io::Error::other("the netns request lock is poisoned"))?.clone();
        Ok(Dialer(Mutex::new(sender)))
    }

    /// A listener bound inside the namespace.
    fn bind(&self, addr: SocketAddr) -> std::io::Result<TcpListener> {
        let (tx, rx) = mpsc::channel();
        self.requests
            .lock()
            .map_err(|_| std::io::Error::other("the netns request lock is poisoned"))?
            .send(Request::Bind(addr, tx))
            .map_err(|_| std::io::Error::other("the netns thread is gone"))?;
        rx.recv().map_err(|_| std::io::Error::other("the netns thread is gone"))?
    }

    /// Makes `command` join this namespace before it execs.
    pub fn enter_on_exec(&self, command: &mut Command) {
        let fd = self.handle.as_raw_fd();
        // SAFETY: setns is async-signal-safe; the fd stays open until exec (it is O_CLOEXEC).
        unsafe {
            command.pre_exec(move || {
                if libc::setns(fd, libc::CLONE_NEWNET) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }

    /// Runs a short command inside; fails unless it exits 0.
    fn run(&self, command: &mut Command) -> std::io::Result<()> {
        self.enter_on_exec(command);
        let out = command.output()?;
        if out.status.success() {
            Ok(())
        } else {
            Err(std::io::Error::other(format!("{command:?}: {}", String::from_utf8_lossy(&out.stderr).trim())))
        }
    }

    /// A TCP connection made from inside the namespace.
    pub fn connect(&self, addr: SocketAddr, timeout: Duration) -> std::io::Result<TcpStream> {
        let (tx, rx) = mpsc::channel();
        self.requests
            .lock()
            .map_err(|_| std::io::Error::other("the netns request lock is poisoned"))?
            .send(Request::Dial(addr, timeout, tx))
            .map_err(|_| std::io::Error::other("the netns thread is gone"))?;
        rx.recv().map_err(|_| std::io::Error::other("the netns thread is gone"))?
    }

    /// `GET path` over plain HTTP from inside the namespace: Ok on a 200.
    pub fn http_get_ok(&self, addr: SocketAddr, path: &str) -> Result<(), String> {
        let stream = self.connect(addr, Duration::from_secs(2)).map_err(|e| e.to_string())?;
        super::tools::http_get_ok_on(stream, path)
    }
}

/// Dials from inside one namespace (a clone of its request channel).
#[derive(Debug)]
struct Dialer(Mutex<mpsc::Sender<Request>>);

impl Dialer {
    fn connect(&self, addr: SocketAddr, timeout: Duration) -> std::io::Result<TcpStream> {
        let (tx, rx) = mpsc::channel();
        self.0
            .lock()
            .map_err(|_| std::io::Error::other("the dialer lock is poisoned"))?
            .send(Request::Dial(addr, timeout, tx))
            .map_err(|_| std::io::Error::other("the netns thread is gone"))?;
        rx.recv().map_err(|_| std::io::Error::other("the netns thread is gone"))?
    }
}

/// A listener's `127.0.0.1:PORT` (on the host, or in a Pod's namespace) → the control plane
/// namespace's `127.0.0.1:PORT`; stops accepting when dropped.
#[derive(Debug)]
pub struct Proxy {
    pub port: u16,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Proxy {
    /// Binds the host side on a port from [`super::ports::pick`] (retrying on a lost race) and
    /// starts copying.
    pub fn start(netns: Arc<Netns>) -> std::io::Result<Proxy> {
        let mut last = None;
        for _ in 0..super::ports::START_ATTEMPTS {
            let port = super::ports::pick()?;
            match TcpListener::bind(("127.0.0.1", port)) {
                Ok(listener) => return Self::serve(listener, port, netns.dialer()?),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| std::io::Error::other("no port")))
    }

    /// Accepts without blocking (polled every 50 ms), so that dropping the proxy stops it
    /// whichever namespace its listener is in.
    fn serve(listener: TcpListener, port: u16, dialer: Dialer) -> std::io::Result<Proxy> {
        listener.set_nonblocking(true)?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let target = SocketAddr::from(([127, 0, 0, 1], port));
        let dialer = Arc::new(dialer);
        let thread = std::thread::Builder::new().name(format!("testkit-proxy-{port}")).spawn(move || {
            while !flag.load(Ordering::SeqCst) {
                let client = match listener.accept() {
                    Ok((client, _)) => client,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(50));
                        continue;
                    }
                    Err(_) => continue,
                };
                if client.set_nonblocking(false).is_err() {
                    continue;
                }
                let dialer = dialer.clone();
                let _ = std::thread::Builder::new().name("testkit-proxy-conn".into()).spawn(move || {
                    match dialer.connect(target, Duration::from_secs(5)) {
                        Ok(upstream) => pipe(client, upstream),
                        Err(_) => {
                            let _ = client.shutdown(Shutdown::Both);
                        }
                    }
                });
            }
        })?;
        Ok(Proxy { port, stop, thread: Some(thread) })
    }
}

/// Copies both ways until either side closes.
fn pipe(client: TcpStream, upstream: TcpStream) {
    let (Ok(mut client_r), Ok(mut upstream_r)) = (client.try_clone(), upstream.try_clone()) else { return };
    let (mut client_w, mut upstream_w) = (client, upstream);
    let back = std::thread::spawn(move || {
        copy(&mut upstream_r, &mut client_w);
        let _ = client_w.shutdown(Shutdown::Write);
    });
    copy(&mut client_r, &mut upstream_w);
    let _ = upstream_w.shutdown(Shutdown::Write);
    let _ = back.join();
}

fn copy(from: &mut TcpStream, to: &mut TcpStream) {
    let mut buf = [0u8; 32 * 1024];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if to.write_all(&buf[..n]).is_err() {
                    return;
                }
            }
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
