//! A local S3 server for the object-store tests: moto's `moto_server`, from the venv of
//! `xtask/requirements.txt`, on a free port of 127.0.0.1, killed when its guard drops.

use std::fs::File;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::project::Result;

/// How long the server may take to listen (its first start imports a lot of Python).
const START_TIMEOUT: Duration = Duration::from_secs(120);

/// A running `moto_server`; dropping it kills and reaps the process, on every path.
#[derive(Debug)]
pub struct Moto {
    child: Child,
    port: u16,
}

impl Moto {
    /// Starts `moto_server` of the venv whose Python is `python`, logging to `log`, and
    /// waits (bounded) until it accepts connections.
    ///
    /// # Errors
    /// If the venv has no `moto_server`, it does not start, exits, or is not listening
    /// within [`START_TIMEOUT`].
    pub fn start(python: &Path, log: &Path) -> Result<Moto> {
        let exe = python.with_file_name(if cfg!(windows) { "moto_server.exe" } else { "moto_server" });
        if !exe.exists() {
            return Err(format!(
                "{} is missing: the venv needs moto[server] (xtask/requirements.txt; with NPY_PYTHON, install it there)",
                exe.display()
            ));
        }
        let port = free_port()?;
        let out = File::create(log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
        let err = out.try_clone().map_err(|e| format!("cannot share {}: {e}", log.display()))?;
        let child = Command::new(&exe)
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
        // From here on the guard owns the process: any early return kills it.
        let mut moto = Moto { child, port };
        moto.wait_listening(log)?;
        Ok(moto)
    }

    /// The server's endpoint, `http://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn addr(&self) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.port))
    }

    fn wait_listening(&mut self, log: &Path) -> Result<()> {
        let start = Instant::now();
        loop {
            if TcpStream::connect_timeout(&self.addr(), Duration::from_millis(200)).is_ok() {
                return Ok(());
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("moto_server exited ({status}) before listening; see {}", log.display()));
            }
            if start.elapsed() > START_TIMEOUT {
                return Err(format!(
                    "moto_server is not listening on port {} after {} s; see {}",
                    self.port,
                    START_TIMEOUT.as_secs(),
                    log.display()
                ));
            }
            thread::sleep(Duration::from_millis(100));
        }
    }

    /// Creates `bucket` with a plain `PUT /bucket` (moto takes any credentials).
    ///
    /// # Errors
    /// When the request fails or the answer is not `200`.
    pub fn create_bucket(&self, bucket: &str) -> Result<()> {
        let failed = |e: std::io::Error| format!("creating bucket {bucket} on {}: {e}", self.endpoint());
        let mut stream = TcpStream::connect_timeout(&self.addr(), Duration::from_secs(10)).map_err(failed)?;
        stream.set_read_timeout(Some(Duration::from_secs(30))).map_err(failed)?;
        let request = format!(
            "PUT /{bucket} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            self.port
        );
        stream.write_all(request.as_bytes()).map_err(failed)?;
        let mut answer = String::new();
        stream.read_to_string(&mut answer).map_err(failed)?;
        let status = answer.lines().next().unwrap_or_default();
        if status.split_whitespace().nth(1) == Some("200") {
            Ok(())
        } else {
            Err(format!("creating bucket {bucket} on {}: the server answered '{status}'", self.endpoint()))
        }
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        // Already exited is fine; the wait reaps it either way.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port of 127.0.0.1 free a moment ago (bound, then released).
fn free_port() -> Result<u16> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(|e| format!("cannot find a free port: {e}"))?;
    let port = listener.local_addr().map_err(|e| format!("cannot find a free port: {e}"))?.port();
    Ok(port)
}
