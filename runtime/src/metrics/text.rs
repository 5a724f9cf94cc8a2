//! The text both scrape formats share: a buffer written out in blocks, escaped label values,
//! sample values, and the `# HELP` / `# TYPE` lines of a family.

use std::io::{self, Write};

/// The size of the buffer [`Buffer`] fills before it writes to its output.
const BUFFER_BYTES: usize = 64 * 1024;

/// The text of a scrape, collected in memory and written to its output in blocks of
/// [`BUFFER_BYTES`].
pub(super) struct Buffer<'a> {
    pub(super) text: Vec<u8>,
    out: &'a mut dyn Write,
}

impl<'a> Buffer<'a> {
    pub(super) fn new(out: &'a mut dyn Write) -> Self {
        Self {
            text: Vec::with_capacity(BUFFER_BYTES + 1024),
            out,
        }
    }

    /// Writes the text out once a block is full; call after each sample.
    pub(super) fn spill(&mut self) -> io::Result<()> {
        if self.text.len() >= BUFFER_BYTES {
            self.out.write_all(&self.text)?;
            self.text.clear();
        }
        Ok(())
    }

    pub(super) fn finish(mut self) -> io::Result<()> {
        self.out.write_all(&self.text)?;
        self.text.clear();
        self.out.flush()
    }
}

impl Write for Buffer<'_> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.text.extend_from_slice(bytes);
        self.spill()?;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Appends `value` as a label value: `\`, `"` and line feeds escaped.
pub(super) fn label_value(text: &mut Vec<u8>, value: &str) {
    if !value.bytes().any(|b| matches!(b, b'\\' | b'"' | b'\n')) {
        text.extend_from_slice(value.as_bytes());
        return;
    }
    for byte in value.bytes() {
        match byte {
            b'\\' => text.extend_from_slice(b"\\\\"),
            b'"' => text.extend_from_slice(b"\\\""),
            b'\n' => text.extend_from_slice(b"\\n"),
            byte => text.push(byte),
        }
    }
}

/// Appends `# HELP` and `# TYPE` lines; `help` escaped as the format reads it (`\` and line
/// feeds in both; `"` too in OpenMetrics, with `open_metrics`).
pub(super) fn header(text: &mut Vec<u8>, name: &str, help: &str, type_: &str, open_metrics: bool) {
    text.extend_from_slice(b"# HELP ");
    text.extend_from_slice(name.as_bytes());
    text.push(b' ');
    for byte in help.bytes() {
        match byte {
            b'\\' => text.extend_from_slice(b"\\\\"),
            b'\n' => text.extend_from_slice(b"\\n"),
            b'"' if open_metrics => text.extend_from_slice(b"\\\""),
            byte => text.push(byte),
        }
    }
    text.extend_from_slice(b"\n# TYPE ");
    text.extend_from_slice(name.as_bytes());
    text.push(b' ');
    text.extend_from_slice(type_.as_bytes());
    text.push(b'\n');
}

/// Appends `value` as a sample value: integers without a fraction, `+Inf`, `-Inf`, `NaN`.
pub(super) fn sample_value(text: &mut Vec<u8>, value: f64) {
    if value.is_nan() {
        text.extend_from_slice(b"NaN");
    } else if value.is_infinite() {
        text.extend_from_slice(if value > 0.0 { b"+Inf" } else { b"-Inf" });
    } else if value.fract() == 0.0 && value.abs() < 9.0e15 {
        text.extend_from_slice(itoa::Buffer::new().format(value as i64).as_bytes());
    } else {
        text.extend_from_slice(ryu::Buffer::new().format_finite(value).as_bytes());
    }
}
