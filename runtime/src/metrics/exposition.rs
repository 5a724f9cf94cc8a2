//! A registry as a scrape's text: the Prometheus text format or OpenMetrics, negotiated from the
//! scraper's `Accept` header, with the per-object families of [`ObjectMetrics`] written straight
//! into the output.
//!
//! [`prometheus::TextEncoder`] encodes what [`Registry::gather`] returns: every sample first built
//! as a protobuf `Metric` (a `LabelPair` with two owned strings per label), every family sorted,
//! then formatted. For the handful of series of pass and step metrics that costs nothing; for
//! per-object state (12 series per object, 1.2 million at 100,000 objects) it is most of a scrape
//! and hundreds of MiB of short-lived allocations. [`encode`] instead lets each [`ObjectMetrics`]
//! write its series as text, from one snapshot of its objects, into a buffer that goes out in
//! chunks: no per-sample allocation, nothing sorted.
//!
//! How: [`encode`] gathers the registry with a mark set on its thread; an `ObjectMetrics`
//! collected under that mark hands itself over and returns no families, and `encode` writes it
//! after the registry's families (`objects::gather_handing_over`). Gathered without the mark
//! (by `TextEncoder`, or any registry consumer), it returns its families as any collector does:
//! the same series, slower. A registry made with `Registry::new_custom` (a prefix, common labels)
//! is gathered that way too: it adds them to what it gathers, never to what is written beside.

use std::io::{self, Write};

use prometheus::Registry;
use prometheus::proto::{LabelPair, MetricFamily, MetricType};

use super::objects::{self, ObjectMetrics};
use super::text::{Buffer, header, label_value, sample_value};

/// The format of a scrape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The Prometheus text format, version 0.0.4.
    Text,
    /// OpenMetrics 1.0.0 text: counters' families named without `_total`, `# EOF` at the end.
    OpenMetrics,
}

impl Format {
    /// The format to answer a request whose `Accept` header is `accept`: OpenMetrics when the
    /// scraper ranks `application/openmetrics-text` above `text/plain` (as Prometheus does), else
    /// the text format (also without the header, or when it lists neither: a scrape is always
    /// answered).
    ///
    /// ```
    /// use kubeward::metrics::Format;
    /// let prometheus = "application/openmetrics-text;version=1.0.0;q=0.5,\
    ///     application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2";
    /// assert_eq!(Format::negotiate(Some(prometheus)), Format::OpenMetrics);
    /// assert_eq!(Format::negotiate(Some("text/plain")), Format::Text);
    /// assert_eq!(Format::negotiate(None), Format::Text);
    /// ```
    #[must_use]
    pub fn negotiate(accept: Option<&str>) -> Self {
        let mut best = (Self::Text, 0.0_f32);
        for range in accept.unwrap_or_default().split(',') {
            let mut parameters = range.split(';').map(str::trim);
            let media = parameters.next().unwrap_or_default().to_ascii_lowercase();
            let mut quality = 1.0_f32;
            let mut version_known = true;
            for parameter in parameters {
                let Some((name, value)) = parameter.split_once('=') else {
                    continue;
                };
                match name.trim().to_ascii_lowercase().as_str() {
                    "q" => quality = value.trim().parse().unwrap_or(0.0),
                    "version" if media == "application/openmetrics-text" => {
                        version_known = matches!(value.trim(), "1.0.0" | "0.0.1");
                    }
                    _ => {}
                }
            }
            let format = match media.as_str() {
                "application/openmetrics-text" if version_known => Self::OpenMetrics,
                "text/plain" | "text/*" | "*/*" => Self::Text,
                _ => continue,
            };
            if quality > best.1 {
                best = (format, quality);
            }
        }
        best.0
    }

    /// The `Content-Type` of a scrape in this format.
    #[must_use]
    pub fn content_type(self) -> &'static str {
        match self {
            Self::Text => prometheus::TEXT_FORMAT,
            Self::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
        }
    }
}

/// Writes one scrape of `registry` in `format` to `out`. Use it in place of
/// [`prometheus::TextEncoder`] to serve a registry holding [`ObjectMetrics`] (the ops server
/// does): the per-object series are written straight as text.
///
/// # Errors
/// The first error writing to `out` or encoding a family; what was written before it stays
/// written.
///
/// ```
/// use std::sync::Arc;
/// use kubeward::metrics::{Format, ObjectMetrics, ObjectState, encode};
/// let metrics = ObjectMetrics::new("kubeward", "demo.kubeward.dev/rollouts", Arc::new(|| vec![ObjectState {
///     namespace: "demo".into(), name: "web".into(), generation: Some(4), conditions: vec![], suspended: false,
///     terminal: false, info: vec![],
/// }]))?;
/// let registry = prometheus::Registry::new();
/// registry.register(Box::new(metrics))?;
/// let mut text = Vec::new();
/// encode(&registry, Format::OpenMetrics, &mut text)?;
/// let text = String::from_utf8(text)?;
/// assert!(text.contains(r#"kubeward_object_generation{controller="demo.kubeward.dev/rollouts",name="web",namespace="demo"} 4"#));
/// assert!(text.ends_with("# EOF\n"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn encode(registry: &Registry, format: Format, out: &mut dyn Write) -> io::Result<()> {
    let (families, sources) = objects::gather_handing_over(registry);
    if let Some(family) = families
        .iter()
        .find(|f| f.get_field_type() == MetricType::UNTYPED)
    {
        // `TextEncoder` panics on one (`unimplemented!`): refused in both formats instead.
        return Err(untyped(family.name()));
    }
    let mut buffer = Buffer::new(out);
    match format {
        Format::Text => {
            prometheus::Encoder::encode(&prometheus::TextEncoder::new(), &families, &mut buffer)
                .map_err(io::Error::other)?;
        }
        Format::OpenMetrics => {
            for family in &families {
                open_metrics_family(family, &mut buffer)?;
            }
        }
    }
    ObjectMetrics::write_sources(&sources, &mut buffer)?;
    if format == Format::OpenMetrics {
        buffer.text.extend_from_slice(b"# EOF\n");
    }
    buffer.finish()
}

/// The error of an untyped family (no collector of this crate or of prometheus' makes one).
fn untyped(name: &str) -> io::Error {
    io::Error::other(format!("family {name} is untyped, which is not encoded"))
}

/// Appends one sample line: `name{labels,extra} value`.
fn sample_line(
    text: &mut Vec<u8>,
    name: &str,
    labels: &[LabelPair],
    extra: Option<(&str, f64)>,
    value: f64,
) {
    text.extend_from_slice(name.as_bytes());
    if !labels.is_empty() || extra.is_some() {
        text.push(b'{');
        let mut first = true;
        for pair in labels {
            if !first {
                text.push(b',');
            }
            first = false;
            text.extend_from_slice(pair.name().as_bytes());
            text.extend_from_slice(b"=\"");
            label_value(text, pair.value());
            text.push(b'"');
        }
        if let Some((label, bound)) = extra {
            if !first {
                text.push(b',');
            }
            text.extend_from_slice(label.as_bytes());
            text.extend_from_slice(b"=\"");
            sample_value(text, bound);
            text.push(b'"');
        }
        text.push(b'}');
    }
    text.push(b' ');
    sample_value(text, value);
    text.push(b'\n');
}

/// Writes one gathered family in OpenMetrics: a counter's family is named without its `_total`
/// and its samples with it.
fn open_metrics_family(family: &MetricFamily, buffer: &mut Buffer<'_>) -> io::Result<()> {
    let name = family.name();
    let (family_name, type_) = match family.get_field_type() {
        MetricType::COUNTER => (name.strip_suffix("_total").unwrap_or(name), "counter"),
        MetricType::GAUGE => (name, "gauge"),
        MetricType::HISTOGRAM => (name, "histogram"),
        MetricType::SUMMARY => (name, "summary"),
        MetricType::UNTYPED => return Err(untyped(name)),
    };
    header(&mut buffer.text, family_name, family.help(), type_, true);
    // The sample names, once per family (not per sample).
    let total = format!("{family_name}_total");
    let (bucket, sum, count_name) = (
        format!("{name}_bucket"),
        format!("{name}_sum"),
        format!("{name}_count"),
    );
    for metric in family.get_metric() {
        let labels = metric.get_label();
        let text = &mut buffer.text;
        match family.get_field_type() {
            MetricType::COUNTER => {
                sample_line(text, &total, labels, None, metric.get_counter().get_value());
            }
            MetricType::GAUGE => {
                sample_line(text, name, labels, None, metric.get_gauge().get_value())
            }
            MetricType::UNTYPED => unreachable!("refused above"),
            MetricType::HISTOGRAM => {
                let histogram = metric.get_histogram();
                let mut infinite = false;
                for b in histogram.get_bucket() {
                    infinite |= b.upper_bound().is_infinite();
                    let bound = Some(("le", b.upper_bound()));
                    sample_line(text, &bucket, labels, bound, b.cumulative_count() as f64);
                }
                let count = histogram.get_sample_count() as f64;
                if !infinite {
                    sample_line(text, &bucket, labels, Some(("le", f64::INFINITY)), count);
                }
                sample_line(text, &sum, labels, None, histogram.get_sample_sum());
                sample_line(text, &count_name, labels, None, count);
            }
            MetricType::SUMMARY => {
                let summary = metric.get_summary();
                for q in summary.get_quantile() {
                    let quantile = Some(("quantile", q.quantile()));
                    sample_line(text, name, labels, quantile, q.value());
                }
                let count = summary.sample_count() as f64;
                sample_line(text, &sum, labels, None, summary.sample_sum());
                sample_line(text, &count_name, labels, None, count);
            }
        }
        buffer.spill()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiation_follows_the_ranks_of_the_accept_header() {
        let cases = [
            (None, Format::Text),
            (Some(""), Format::Text),
            (Some("*/*"), Format::Text),
            (Some("application/openmetrics-text"), Format::OpenMetrics),
            (
                Some("text/plain;version=0.0.4;q=0.9,application/openmetrics-text;q=0.5"),
                Format::Text,
            ),
            (
                Some("application/openmetrics-text;version=2.0.0,text/plain;q=0.1"),
                Format::Text,
            ),
            (Some("application/json"), Format::Text),
            (
                Some("Application/OpenMetrics-Text; version=1.0.0; Q=0.8, */*; q = 0.1"),
                Format::OpenMetrics,
            ),
            // Prometheus 3's default.
            (
                Some(
                    "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,\
                     application/openmetrics-text;version=0.0.1;q=0.5,\
                     text/plain;version=1.0.0;escaping=allow-utf-8;q=0.4,\
                     text/plain;version=0.0.4;q=0.3,*/*;q=0.2",
                ),
                Format::OpenMetrics,
            ),
        ];
        for (accept, format) in cases {
            assert_eq!(Format::negotiate(accept), format, "{accept:?}");
        }
    }

    #[test]
    fn values_and_label_values_are_written_as_both_formats_read_them() {
        let mut text = Vec::new();
        for value in [
            1.0,
            -3.0,
            0.25,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            1e20,
        ] {
            sample_value(&mut text, value);
            text.push(b' ');
        }
        label_value(&mut text, "a\"b\\c\nd");
        assert_eq!(
            String::from_utf8(text).unwrap(),
            "1 -3 0.25 +Inf -Inf NaN 1e20 a\\\"b\\\\c\\nd"
        );
    }

    #[test]
    fn open_metrics_names_counter_families_without_total_and_ends_with_eof() {
        let registry = Registry::new();
        let counter =
            prometheus::IntCounterVec::new(prometheus::Opts::new("demo_total", "Demo."), &["a"])
                .unwrap();
        counter.with_label_values(&["x"]).inc_by(3);
        let histogram = prometheus::Histogram::with_opts(
            prometheus::HistogramOpts::new("demo_seconds", "Demo.").buckets(vec![0.5]),
        )
        .unwrap();
        histogram.observe(0.25);
        registry.register(Box::new(counter)).unwrap();
        registry.register(Box::new(histogram)).unwrap();
        let mut text = Vec::new();
        encode(&registry, Format::OpenMetrics, &mut text).unwrap();
        assert_eq!(
            String::from_utf8(text).unwrap(),
            "# HELP demo_seconds Demo.\n# TYPE demo_seconds histogram\n\
             demo_seconds_bucket{le=\"0.5\"} 1\ndemo_seconds_bucket{le=\"+Inf\"} 1\n\
             demo_seconds_sum 0.25\ndemo_seconds_count 1\n\
             # HELP demo Demo.\n# TYPE demo counter\ndemo_total{a=\"x\"} 3\n# EOF\n"
        );
    }
}
