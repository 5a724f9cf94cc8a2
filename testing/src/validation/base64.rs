//! Go's `encoding/base64.StdEncoding`, as `[]byte` fields of API objects are decoded from JSON:
//! the decoded bytes, or the `illegal base64 data at input byte N` error with Go's offset.

const PAD: u8 = b'=';

fn sextet(c: u8) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

/// Go's `CorruptInputError` text.
fn corrupt(offset: usize) -> String {
    format!("illegal base64 data at input byte {offset}")
}

/// Encodes `bytes` as padded standard base64 (`base64.StdEncoding.EncodeToString`).
pub fn encode(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let mut b = [0u8; 3];
        b[..chunk.len()].copy_from_slice(chunk);
        let v = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(v >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push(PAD as char);
            }
        }
    }
    out
}

/// Decodes padded standard base64, skipping `\r` and `\n` as Go does.
pub fn decode(text: &str) -> Result<Vec<u8>, String> {
    let src = text.as_bytes();
    let mut out = Vec::with_capacity(src.len() / 4 * 3);
    let mut quantum = [0u8; 4];
    let mut j = 0;
    let mut si = 0;
    while si < src.len() {
        let c = src[si];
        si += 1;
        if c == b'\r' || c == b'\n' {
            continue;
        }
        if c == PAD {
            // Padding may only fill the last one or two places of the final quantum.
            match j {
                2 => {
                    let next = src[si..].iter().position(|&b| b != b'\r' && b != b'\n');
                    match next {
                        None => return Err(corrupt(src.len())),
                        Some(k) if src[si + k] == PAD => si += k + 1,
                        Some(k) => return Err(corrupt(si + k - 1)),
                    }
                }
                3 => {}
                _ => return Err(corrupt(si - 1)),
            }
            if let Some(k) = src[si..].iter().position(|&b| b != b'\r' && b != b'\n') {
                return Err(corrupt(si + k));
            }
            let n = j;
            quantum[j..].fill(0);
            let v = quantum
                .iter()
                .fold(0u32, |acc, &s| (acc << 6) | u32::from(s));
            out.extend_from_slice(&v.to_be_bytes()[1..n]);
            return Ok(out);
        }
        let Some(s) = sextet(c) else {
            return Err(corrupt(si - 1));
        };
        quantum[j] = s;
        j += 1;
        if j == 4 {
            let v = quantum
                .iter()
                .fold(0u32, |acc, &s| (acc << 6) | u32::from(s));
            out.extend_from_slice(&v.to_be_bytes()[1..]);
            j = 0;
        }
    }
    if j != 0 {
        return Err(corrupt(si - j));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::{decode, encode};

    #[test]
    fn encoding_round_trips() {
        for text in ["", "h", "hi", "hello", "hello!"] {
            assert_eq!(decode(&encode(text.as_bytes())).unwrap(), text.as_bytes());
        }
        assert_eq!(encode(b"hello"), "aGVsbG8=");
    }

    #[test]
    fn decodes_padded_base64_and_skips_newlines() {
        assert_eq!(decode("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(decode("aGVs\nbG8h").unwrap(), b"hello!");
        assert_eq!(decode("aGk=").unwrap(), b"hi");
        assert_eq!(decode("aA==").unwrap(), b"h");
        assert_eq!(decode("").unwrap(), b"");
    }

    #[test]
    fn errors_carry_go_offsets() {
        assert_eq!(
            decode("not base64!").unwrap_err(),
            "illegal base64 data at input byte 3"
        );
        assert_eq!(
            decode("aGVsbG8").unwrap_err(),
            "illegal base64 data at input byte 4"
        );
        assert_eq!(
            decode("aA=x").unwrap_err(),
            "illegal base64 data at input byte 2"
        );
        assert_eq!(
            decode("aA=").unwrap_err(),
            "illegal base64 data at input byte 3"
        );
        assert_eq!(
            decode("aGk=aGk=").unwrap_err(),
            "illegal base64 data at input byte 4"
        );
    }
}
