use std::future::Future;
use std::pin::Pin;

#[kubeward::step("deploy")]
fn deploy() -> impl Future<Output = Result<(), std::io::Error>> {
    async { Ok(()) }
}

#[kubeward::step("render")]
fn render() -> Pin<Box<dyn Future<Output = u8> + Send>> {
    Box::pin(async { 1 })
}

// Not refused: an async fn is timed while it runs, and a sync fn returning a value is fine.
#[kubeward::step("verify")]
async fn verify() -> u8 {
    1
}

fn main() {}
