//! Per-object metrics hold nothing between scrapes: their samples are built from the snapshot at
//! each scrape and dropped with it, so a controller watching many objects does not keep every
//! series of its last scrape (several KiB per object) alive until the next one.
//!
//! Measured with a counting global allocator, so this binary holds this one test.

#[path = "../benches/support/alloc.rs"]
#[allow(dead_code)]
mod alloc;

use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kubeward::conditions::Condition;
use kubeward::metrics::{ObjectMetrics, ObjectState};

#[global_allocator]
static GLOBAL: alloc::Counting = alloc::Counting;

const OBJECTS: usize = 2_000;

fn objects() -> Vec<ObjectState> {
    (0..OBJECTS)
        .map(|i| ObjectState {
            namespace: "default".into(),
            name: format!("w{i}"),
            generation: Some(3),
            conditions: vec![Condition {
                type_: "Ready".into(),
                status: "True".into(),
                reason: "Available".into(),
                message: "generation 3 is available".into(),
                observed_generation: Some(3),
                last_transition_time: Time(jiff::Timestamp::UNIX_EPOCH),
            }],
            suspended: false,
            terminal: false,
            info: Vec::new(),
        })
        .collect()
}

fn registry(objects: fn() -> Vec<ObjectState>) -> prometheus::Registry {
    let metrics = ObjectMetrics::new("kubeward", "bench.kubeward.dev/w", Arc::new(objects))
        .expect("valid prefix");
    let registry = prometheus::Registry::new();
    registry.register(Box::new(metrics)).expect("registers");
    registry
}

fn encode(registry: &prometheus::Registry) -> String {
    prometheus::TextEncoder::new()
        .encode_to_string(&registry.gather())
        .expect("encodes")
}

#[test]
fn a_scrape_of_many_objects_leaves_nothing_allocated_behind() {
    // A first scrape elsewhere builds what lives as long as the process (lazy statics).
    drop(encode(&registry(|| {
        objects().into_iter().take(1).collect()
    })));
    let registry = registry(objects);
    let before = alloc::allocated();
    let text = encode(&registry);
    let series = text
        .lines()
        .filter(|l| l.starts_with("kubeward_object_condition{"))
        .count();
    let scraped = text.len();
    drop(text);
    let held = alloc::allocated() - before;
    assert_eq!(series, 3 * OBJECTS);
    assert!(
        held < 4096,
        "a scrape of {OBJECTS} objects ({scraped} bytes of text) left {held} bytes allocated"
    );
}
