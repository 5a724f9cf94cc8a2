//! The accept loop shared by the in-process server and the fault proxy in front of a real
//! kube-apiserver.

use std::future::Future;

use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

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
