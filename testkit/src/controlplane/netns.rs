//! A network namespace the harness makes for one control plane that serves admission webhooks,
//! and the loopback proxy that lets the host's clients reach it.
//!
//! Why: the API server calls a webhook at the address of its Service's endpoints
//! (`--enable-aggregator-routing=true`), and an EndpointSlice may not hold a loopback address; a
//! controller's webhook server binds `:9443` on every interface. The only addresses allowed here
//! are loopback ones and those inside namespaces the harness makes itself. So etcd,
//! kube-apiserver, kube-controller-manager and the controllers the stand-in runs share one fresh
//! network namespace whose `lo` also carries [`POD_IP`], the controllers' Pod IP: the API server
//! reaches a webhook there, and nothing binds on the host but the proxy.
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
//! None of this changes what a client sees: the same API server, certificate and port.

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

/// The Pod IP of every controller Pod the stand-in runs (on the namespace's `lo`).
pub const POD_IP: &str = "10.244.0.2";

type Dial = (SocketAddr, Duration, mpsc::Sender<std::io::Result<TcpStream>>);

/// A network namespace made by the harness; gone when this handle and every process in it are.
#[derive(Debug)]
pub struct Netns {
    handle: File,
    dialer: Mutex<mpsc::Sender<Dial>>,
}

impl Netns {
    /// Makes the namespace, with `lo` up and carrying [`POD_IP`].
    pub fn create() -> std::io::Result<Netns> {
        let (ready_tx, ready_rx) = mpsc::channel::<std::io::Result<File>>();
        let (dial_tx, dial_rx) = mpsc::channel::<Dial>();
        std::thread::Builder::new().name("testkit-netns".into()).spawn(move || {
            // SAFETY: unshare affects this thread only (CLONE_NEWNET is per task).
            if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
                let _ = ready_tx.send(Err(std::io::Error::last_os_error()));
                return;
            }
            let _ = ready_tx.send(File::open("/proc/thread-self/ns/net"));
            // Sockets created on this thread live in the namespace.
            for (addr, timeout, reply) in dial_rx {
                let _ = reply.send(TcpStream::connect_timeout(&addr, timeout));
            }
        })?;
        let handle = ready_rx.recv().map_err(|_| std::io::Error::other("the netns thread died"))??;
        let netns = Netns { handle, dialer: Mutex::new(dial_tx) };
        netns.run(Command::new("ip").args(["link", "set", "lo", "up"]))?;
        netns.run(Command::new("ip").args(["addr", "add", &format!("{POD_IP}/32"), "dev", "lo"]))?;
        Ok(netns)
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
        self.dialer
            .lock()
            .map_err(|_| std::io::Error::other("the netns dialer lock is poisoned"))?
            .send((addr, timeout, tx))
            .map_err(|_| std::io::Error::other("the netns thread is gone"))?;
        rx.recv().map_err(|_| std::io::Error::other("the netns thread is gone"))?
    }

    /// `GET path` over plain HTTP from inside the namespace: Ok on a 200.
    pub fn http_get_ok(&self, addr: SocketAddr, path: &str) -> Result<(), String> {
        let stream = self.connect(addr, Duration::from_secs(2)).map_err(|e| e.to_string())?;
        super::tools::http_get_ok_on(stream, path)
    }
}

/// Host `127.0.0.1:PORT` → the namespace's `127.0.0.1:PORT`; stops accepting when dropped.
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
                Ok(listener) => return Self::serve(listener, port, netns),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| std::io::Error::other("no port")))
    }

    fn serve(listener: TcpListener, port: u16, netns: Arc<Netns>) -> std::io::Result<Proxy> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let target = SocketAddr::from(([127, 0, 0, 1], port));
        let thread = std::thread::Builder::new().name(format!("testkit-proxy-{port}")).spawn(move || {
            for client in listener.incoming() {
                if flag.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(client) = client else { continue };
                let netns = netns.clone();
                let _ = std::thread::Builder::new().name("testkit-proxy-conn".into()).spawn(move || {
                    match netns.connect(target, Duration::from_secs(5)) {
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
        // Wake the accept loop.
        let _ = TcpStream::connect_timeout(&SocketAddr::from(([127, 0, 0, 1], self.port)), Duration::from_secs(1));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
