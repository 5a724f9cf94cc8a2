//! The accept loop shared by the in-process server and the fault proxy in front of a real
//! kube-apiserver, and the listening address both keep across a restart.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Mutex;

use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

/// Spawns a server's accept loop on a bound listener.
type Spawn = Box<dyn Fn(TcpListener) -> JoinHandle<()> + Send + Sync>;

/// A server listening on a fixed address: its accept loop can be stopped, and started again on
/// the same address (a restart: every connection dropped, the port kept). Dropping it stops
/// the loop.
pub(crate) struct Listening {
    addr: SocketAddr,
    spawn: Spawn,
    task: Mutex<Option<JoinHandle<()>>>,
}

impl Listening {
    /// Starts the accept loop `spawn` spawns on `listener`.
    ///
    /// # Errors
    /// The listener has no local address.
    pub(crate) fn serve(
        listener: TcpListener,
        spawn: impl Fn(TcpListener) -> JoinHandle<()> + Send + Sync + 'static,
    ) -> io::Result<Self> {
        let addr = listener.local_addr()?;
        let task = spawn(listener);
        Ok(Self {
            addr,
            spawn: Box::new(spawn),
            task: Mutex::new(Some(task)),
        })
    }

    /// The address listened on.
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops the accept loop and waits until the listener and every connection are closed.
    pub(crate) async fn stop(&self) {
        let task = self.task.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(task) = task {
            task.abort();
            let _ = task.await;
        }
    }

    /// Stops the accept loop (see [`stop`](Self::stop)) and starts it again on the same
    /// address.
    ///
    /// # Errors
    /// The bind's failure (the port was taken meanwhile).
    pub(crate) async fn restart(&self) -> io::Result<()> {
        self.stop().await;
        let listener = TcpListener::bind(self.addr).await?;
        let task = (self.spawn)(listener);
        *self.task.lock().unwrap_or_else(|p| p.into_inner()) = Some(task);
        Ok(())
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        if let Some(task) = self.task.lock().unwrap_or_else(|p| p.into_inner()).take() {
            task.abort();
        }
    }
}

/// Accepts connections on `listener` until aborted, each served by `serve` in a task of its
/// own. Aborting drops the `JoinSet`, which aborts every connection task (and so every open
/// watch).
pub(crate) async fn accept_each<F, Fut>(listener: TcpListener, serve: F)
where
    F: Fn(TcpStream) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let _ = stream.set_nodelay(true);
                connections.spawn(serve(stream));
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}
