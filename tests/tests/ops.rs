//! The operations endpoint and what it makes visible (issue 23, items 8 and 10): `/metrics`
//! streamed in full from the blocking pool, bounded connections, readiness that fails with a
//! reason when the cache cannot sync, `/healthz` that fails when a controller's run loop died,
//! and observers that cannot stop a controller.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kube::api::Api;
use kubeward::controller::Controller;
use kubeward::observe::{PassRecord, ReconcileObserver};
use kubeward::ops::OpsServer;
use kubeward_testing::ApiServer;
use kubeward_tests::*;
use prometheus::core::{Collector, Desc};
use prometheus::proto::MetricFamily;
use prometheus::{IntCounterVec, Opts, Registry};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// `GET path` over HTTP/1.1: the status code and the body, a chunked body decoded.
async fn get(addr: SocketAddr, path: &str) -> (u16, String) {
    let (status, _, body) = get_accepting(addr, path, None).await;
    (status, body)
}

/// `GET path` with `Accept: accept`: the status code, the response's `Content-Type` and the
/// body, a chunked body decoded.
async fn get_accepting(
    addr: SocketAddr,
    path: &str,
    accept: Option<&str>,
) -> (u16, String, String) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let accept = accept
        .map(|a| format!("Accept: {a}\r\n"))
        .unwrap_or_default();
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n{accept}Connection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("send");
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.expect("read");
    let response = String::from_utf8(response).expect("UTF-8");
    let (head, body) = response.split_once("\r\n\r\n").expect("a head");
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .expect("status line");
    let chunked = head
        .lines()
        .any(|l| l.eq_ignore_ascii_case("transfer-encoding: chunked"));
    let content_type = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-type: ")
                .map(str::to_owned)
        })
        .unwrap_or_default();
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_owned()
    };
    (status, content_type, body)
}

/// The data of a `Transfer-Encoding: chunked` body; panics on a body cut short.
fn dechunk(mut body: &str) -> String {
    let mut data = String::new();
    loop {
        let (size, rest) = body.split_once("\r\n").expect("a chunk size line");
        let size = usize::from_str_radix(size.trim(), 16).expect("a hex chunk size");
        if size == 0 {
            return data;
        }
        data.push_str(&rest[..size]);
        body = rest[size..]
            .strip_prefix("\r\n")
            .expect("CRLF after a chunk");
    }
}

async fn serve(ops: OpsServer) -> SocketAddr {
    let addr = ops.local_addr().unwrap();
    tokio::spawn(ops.serve());
    addr
}

async fn bind() -> OpsServer {
    OpsServer::bind("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap()
}

/// A registry of `series` counters, several chunks of text.
fn big_registry(series: u64) -> Registry {
    let registry = Registry::new();
    let counters = IntCounterVec::new(
        Opts::new("ops_test_requests_total", "Requests by path."),
        &["path"],
    )
    .unwrap();
    for i in 0..series {
        counters
            .with_label_values(&[&format!("/objects/{i:08}")])
            .inc_by(i);
    }
    registry.register(Box::new(counters)).unwrap();
    registry
}

#[tokio::test]
async fn metrics_serves_the_whole_text_the_encoder_makes_in_chunks() {
    let registry = big_registry(20_000);
    let expected = scrape(&registry);
    assert!(
        expected.len() > 8 * kubeward::ops::CHUNK_BYTES,
        "several chunks: {} bytes",
        expected.len()
    );
    let addr = serve(bind().await.with_registry(registry)).await;
    // Two scrapers at once: one waits for the other's scrape to be built, both get all of it.
    let (a, b) = tokio::join!(get(addr, "/metrics"), get(addr, "/metrics"));
    assert_eq!(a.0, 200);
    assert!(
        a.1 == expected,
        "the first scrape differs from the encoder's text"
    );
    assert_eq!(b.0, 200);
    assert!(
        b.1 == expected,
        "the second scrape differs from the encoder's text"
    );
}

/// What Prometheus 2.x sends on a scrape by default (3.x's, with `escaping`, is in the negotiation table of `kubeward::metrics`).
const PROMETHEUS_ACCEPT: &str = "application/openmetrics-text;version=1.0.0;q=0.5,\
    application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2";

#[tokio::test]
async fn metrics_answers_prometheus_in_open_metrics_and_others_in_the_text_format() {
    let registry = big_registry(3);
    let addr = serve(bind().await.with_registry(registry)).await;
    let (status, content_type, body) =
        get_accepting(addr, "/metrics", Some(PROMETHEUS_ACCEPT)).await;
    assert_eq!(status, 200);
    assert_eq!(
        content_type,
        "application/openmetrics-text; version=1.0.0; charset=utf-8"
    );
    assert_eq!(
        body,
        "# HELP ops_test_requests Requests by path.\n# TYPE ops_test_requests counter\n\
         ops_test_requests_total{path=\"/objects/00000000\"} 0\n\
         ops_test_requests_total{path=\"/objects/00000001\"} 1\n\
         ops_test_requests_total{path=\"/objects/00000002\"} 2\n# EOF\n"
    );
    for accept in [None, Some("text/plain"), Some("application/json")] {
        let (status, content_type, body) = get_accepting(addr, "/metrics", accept).await;
        assert_eq!(status, 200);
        assert_eq!(content_type, "text/plain; version=0.0.4", "{accept:?}");
        assert!(
            body.starts_with("# HELP ops_test_requests_total Requests by path.\n"),
            "{body}"
        );
        assert!(!body.contains("# EOF"), "{body}");
    }
}

#[tokio::test]
async fn a_connection_that_never_sends_its_headers_is_closed_and_blocks_nobody() {
    let addr = serve(
        bind()
            .await
            .with_header_read_timeout(Duration::from_millis(300))
            .with_max_connections(2),
    )
    .await;
    let mut loris = tokio::net::TcpStream::connect(addr).await.unwrap();
    loris
        .write_all(b"GET /healthz HTTP/1.1\r\nHo")
        .await
        .unwrap();
    // Served meanwhile, also with the loris holding one of the two connections.
    assert_eq!(get(addr, "/healthz").await, (200, "ok\n".into()));
    assert_eq!(get(addr, "/readyz").await, (200, "ok\n".into()));
    // The loris is closed by the server (a 408 at most, never a 200): reading ends. The bound
    // is only there to fail instead of hanging.
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), loris.read_to_end(&mut answer))
        .await
        .expect("the slow connection is closed by the server")
        .ok();
    let answer = String::from_utf8_lossy(&answer);
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 408"),
        "{answer}"
    );
    assert_eq!(get(addr, "/healthz").await.0, 200);
}

/// A collector whose collection waits for the test to open its gate (or 40 s): a scrape that
/// is being built for as long as the test wants.
struct Gate {
    desc: Desc,
    entered: AtomicBool,
    open: Mutex<std::sync::mpsc::Receiver<()>>,
    opened_by_test: AtomicBool,
}

impl Collector for Gate {
    fn desc(&self) -> Vec<&Desc> {
        vec![&self.desc]
    }
    fn collect(&self) -> Vec<MetricFamily> {
        self.entered.store(true, Ordering::SeqCst);
        let opened = self
            .open
            .lock()
            .unwrap()
            .recv_timeout(Duration::from_secs(40));
        self.opened_by_test.store(opened.is_ok(), Ordering::SeqCst);
        Vec::new()
    }
}

/// A scrape being built does not hold up passes, even on a runtime with a single worker: the
/// scrape is built on the blocking pool. (Built on the worker, as before, the pass would wait for
/// the collection, which waits for the pass: the gate opens only after 40 s, and the test fails.)
#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn a_pass_completes_while_a_scrape_is_being_built() {
    let (_server, client) = server_with_widgets().await;
    let (open, gate_open) = std::sync::mpsc::channel();
    let gate = Arc::new(Gate {
        desc: Desc::new(
            "ops_test_gate".into(),
            "A gate.".into(),
            vec![],
            Default::default(),
        )
        .unwrap(),
        entered: AtomicBool::new(false),
        open: Mutex::new(gate_open),
        opened_by_test: AtomicBool::new(false),
    });
    let registry = Registry::new();
    registry
        .register(Box::new(GateHandle(gate.clone())))
        .unwrap();
    let addr = serve(bind().await.with_registry(registry)).await;
    let running = Running::start(Controller::new(Widgets::default(), client.clone()));

    let scrape = tokio::spawn(get(addr, "/metrics"));
    eventually("the scrape is being built", || async {
        gate.entered.load(Ordering::SeqCst)
    })
    .await;
    create_widget(
        &client,
        "w1",
        WidgetSpec::ready(Mode::Complete, "True", "Applied", ""),
    )
    .await;
    eventually("the status of w1 written", || async {
        ready_reason(&client, "w1").await.as_deref() == Some("Applied")
    })
    .await;
    open.send(()).unwrap();
    assert_eq!(scrape.await.unwrap().0, 200);
    assert!(
        gate.opened_by_test.load(Ordering::SeqCst),
        "the pass completed only once the scrape's collection gave up waiting"
    );
    running.stop().await;
}

/// Registers the shared gate (a registry takes its collectors by value).
struct GateHandle(Arc<Gate>);

impl Collector for GateHandle {
    fn desc(&self) -> Vec<&Desc> {
        self.0.desc()
    }
    fn collect(&self) -> Vec<MetricFamily> {
        self.0.collect()
    }
}

/// The reason of the stored `Ready` condition of the widget `name`.
async fn ready_reason(client: &kube::Client, name: &str) -> Option<String> {
    let widget = Api::<Widget>::namespaced(client.clone(), "default")
        .get(name)
        .await
        .ok()?;
    widget
        .status?
        .conditions
        .into_iter()
        .find(|c| c.type_ == "Ready")
        .map(|c| c.reason)
}

/// The log lines at `level` and above seen by [`Logs`]: message and fields, one string each.
#[derive(Clone, Default)]
struct Logs(Arc<Mutex<Vec<(tracing::Level, String)>>>);

impl Logs {
    /// Captures the logs of this thread (the test's current-thread runtime runs every task of
    /// the controller on it) until the guard is dropped.
    fn capture() -> (Self, tracing::subscriber::DefaultGuard) {
        let logs = Self::default();
        let guard = tracing::subscriber::set_default(logs.clone());
        (logs, guard)
    }

    fn at(&self, level: tracing::Level, containing: &str) -> Vec<String> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter(|(l, line)| *l == level && line.contains(containing))
            .map(|(_, line)| line.clone())
            .collect()
    }
}

/// Collects an event's fields as `name=value`, the message first.
struct Line(String);

impl tracing::field::Visit for Line {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0.insert_str(0, &format!("{value:?} "));
        } else {
            self.0.push_str(&format!("{}={value:?} ", field.name()));
        }
    }
}

impl tracing::Subscriber for Logs {
    fn enabled(&self, metadata: &tracing::Metadata<'_>) -> bool {
        *metadata.level() <= tracing::Level::INFO
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        tracing::span::Id::from_u64(NEXT.fetch_add(1, Ordering::Relaxed))
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let mut line = Line(String::new());
        event.record(&mut line);
        self.0
            .lock()
            .unwrap()
            .push((*event.metadata().level(), line.0));
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

/// A controller whose CRD is not installed: every list answers 404. Past the sync timeout it is
/// not ready, `/readyz` says why, and a warning said so; its watch failure was logged at warn.
#[tokio::test]
async fn a_missing_crd_makes_the_controller_not_ready_after_the_sync_timeout() {
    let (logs, _capture) = Logs::capture();
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let controller = Controller::new(Widgets::default(), client.clone())
        .with_sync_timeout(Duration::from_millis(500));
    let addr = serve(bind().await.with_readiness(controller.readiness())).await;
    let running = Running::start(controller);
    eventually("the sync timeout in /readyz", || async {
        get(addr, "/readyz")
            .await
            .1
            .contains("has not listed its objects within")
    })
    .await;
    let (status, body) = get(addr, "/readyz").await;
    assert_eq!(status, 503, "{body}");
    assert!(body.starts_with("not ready: 1 of 1 controller(s): test.kubeward.dev/widgets: its watch has not listed its objects within 500ms: list: 404"), "{body}");
    assert_eq!(body.lines().count(), 1, "{body}");
    assert_eq!(get(addr, "/healthz").await.0, 200, "alive: it keeps trying");
    let timed_out = logs.at(tracing::Level::WARN, "a watch has not synced in time");
    assert_eq!(timed_out.len(), 1, "{timed_out:?}");
    assert!(timed_out[0].contains("list: 404"), "{timed_out:?}");
    assert!(timed_out[0].contains("its watch"), "{timed_out:?}");
    let failed = logs.at(tracing::Level::WARN, "watch or list failed");
    assert!(!failed.is_empty(), "the list failure is logged at warn");
    // A group no CRD serves: kube-apiserver's plain-text "404 page not found" (no Status).
    assert!(failed[0].contains("list: 404"), "{failed:?}");
    running.stop().await;
}

/// An observer that panics on every pass.
struct Panicking;

impl ReconcileObserver for Panicking {
    fn pass_finished(&self, _: &PassRecord) {
        panic!("observer bug");
    }
}

/// A panicking observer is reported once and switched off; the controller goes on reconciling
/// (statuses written), the other observers go on receiving, and it stays ready and alive.
#[tokio::test]
async fn a_panicking_observer_is_reported_and_the_controller_goes_on() {
    let (logs, _capture) = Logs::capture();
    let (_server, client) = server_with_widgets().await;
    let recording = Recording::new();
    let controller = Controller::new(Widgets::default(), client.clone())
        .with_observer(Arc::new(Panicking))
        .with_observer(recording.clone());
    let addr = serve(bind().await.with_readiness(controller.readiness())).await;
    let running = Running::start(controller);
    for name in ["w1", "w2"] {
        create_widget(
            &client,
            name,
            WidgetSpec::ready(Mode::Complete, "True", "Applied", ""),
        )
        .await;
        eventually("the status written", || async {
            ready_reason(&client, name).await.as_deref() == Some("Applied")
        })
        .await;
    }
    assert!(running.is_running());
    assert!(
        !recording.passes_of("w2").is_empty(),
        "the next observer still receives"
    );
    let reported = logs.at(tracing::Level::ERROR, "a reconcile observer panicked");
    assert_eq!(reported.len(), 1, "{reported:?}");
    assert!(reported[0].contains("observer bug"), "{reported:?}");
    assert!(reported[0].contains("Panicking"), "{reported:?}");
    assert_eq!(get(addr, "/readyz").await.0, 200);
    assert_eq!(get(addr, "/healthz").await.0, 200);
    running.stop().await;
}

/// A controller whose run loop panics (here its shutdown signal, a future of the user's):
/// `/healthz` fails with the reason and `/readyz` is not ready. One stopped as asked is alive.
#[tokio::test]
async fn healthz_fails_once_a_controller_run_loop_panicked() {
    let (_server, client) = server_with_widgets().await;
    let (trigger, triggered) = tokio::sync::oneshot::channel::<()>();
    let broken = Controller::new(Widgets::default(), client.clone()).shutdown_on(async move {
        let _ = triggered.await;
        panic!("shutdown signal bug");
    });
    let stopped =
        Controller::new(Widgets::default(), client.clone()).with_name("test.kubeward.dev/other");
    let addr = serve(
        bind()
            .await
            .with_readiness(broken.readiness())
            .with_readiness(stopped.readiness()),
    )
    .await;
    let broken = tokio::spawn(broken.run());
    let stopped = Running::start(stopped);
    eventually("ready", || async { get(addr, "/readyz").await.0 == 200 }).await;
    assert_eq!(get(addr, "/healthz").await, (200, "ok\n".into()));
    stopped.stop().await;
    assert_eq!(
        get(addr, "/healthz").await,
        (200, "ok\n".into()),
        "a controller stopped as asked is not a failure"
    );
    trigger.send(()).unwrap();
    assert!(broken.await.unwrap_err().is_panic());
    let (status, body) = get(addr, "/healthz").await;
    assert_eq!(status, 500, "{body}");
    assert_eq!(
        body,
        "unhealthy: test.kubeward.dev/widgets: its run loop ended abnormally: panicked: shutdown signal bug\n"
    );
    let (status, body) = get(addr, "/readyz").await;
    assert_eq!(status, 503);
    assert_eq!(body.lines().count(), 1, "{body}");
}
