//! Scraping a registry: the text and the cost of a scrape, and the anchor of per-object series
//! (the same series held in prometheus `GaugeVec`s, as a hand-written controller would hold
//! them).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use prometheus::{GaugeVec, Opts, Registry};

use super::drive;

/// One scrape of `registry` in the text format, as the ops server writes it (per-object series
/// straight as text).
pub fn encode(registry: &Registry) -> String {
    let mut text = Vec::new();
    kubeward::metrics::encode(registry, kubeward::metrics::Format::Text, &mut text)
        .expect("encodes");
    String::from_utf8(text).expect("UTF-8")
}

/// One scrape of `registry` through `prometheus::TextEncoder` (every sample built as a protobuf
/// `Metric` first, as any registry consumer gathers it).
pub fn encode_gathered(registry: &Registry) -> String {
    prometheus::TextEncoder::new()
        .encode_to_string(&registry.gather())
        .expect("encodes")
}

/// Times `scrapes` scrapes of `registry` by `encode`: the median time and the size of one.
pub fn scrape_cost(
    registry: &Registry,
    scrapes: usize,
    encode: fn(&Registry) -> String,
) -> (Duration, usize) {
    let mut times = Vec::new();
    let mut bytes = 0;
    for _ in 0..scrapes {
        let start = Instant::now();
        bytes = encode(registry).len();
        times.push(start.elapsed());
    }
    (drive::median(times), bytes)
}

/// The physical limit of a scrape of `bytes`: the median time to copy that many bytes into a
/// fresh buffer (`scrapes` times), as a scrape's text is written into its buffers.
pub fn copy_cost(bytes: usize, scrapes: usize) -> Duration {
    let source = vec![b'x'; bytes];
    let times = (0..scrapes.max(1))
        .map(|_| {
            let start = Instant::now();
            let copy = std::hint::black_box(&source).clone();
            std::hint::black_box(copy);
            start.elapsed()
        })
        .collect();
    drive::median(times)
}

/// The labels of a sample, as (name, value).
type Labels<'a> = Vec<(&'a str, &'a str)>;

/// One sample line of the text format: family, labels, value.
fn sample(line: &str) -> Option<(&str, Labels<'_>, f64)> {
    let (name, rest) = line.split_once('{')?;
    let (labels, value) = rest.rsplit_once("} ")?;
    let labels = labels
        .split("\",")
        .filter_map(|kv| kv.split_once("=\""))
        .map(|(k, v)| (k, v.trim_end_matches('"')))
        .collect();
    Some((name, labels, value.parse().ok()?))
}

/// The per-object series of a kubeward scrape, held in `GaugeVec`s as a hand-written controller
/// would hold them.
pub fn gauges_like(text: &str) -> Registry {
    let registry = Registry::new();
    let mut families: BTreeMap<&str, GaugeVec> = BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with("kubeward_object_")) {
        let Some((name, labels, value)) = sample(line) else {
            continue;
        };
        let family = families.entry(name).or_insert_with(|| {
            let names: Vec<&str> = labels.iter().map(|(k, _)| *k).collect();
            let family = GaugeVec::new(Opts::new(name, name), &names).expect("valid family");
            registry
                .register(Box::new(family.clone()))
                .expect("registers");
            family
        });
        let values: Vec<&str> = labels.iter().map(|(_, v)| *v).collect();
        family.with_label_values(&values).set(value);
    }
    registry
}
