//! Go's `encoding/base64`: `StdEncoding`, as `[]byte` fields of API objects are decoded from
//! JSON, and `RawURLEncoding`, as list continue tokens are: the decoded bytes, or the
//! `illegal base64 data at input byte N` error with Go's offset.

const PAD: u8 = b'=';

/// One of Go's encodings: its alphabet, and whether it pads.
pub(crate) struct Encoding {
    alphabet: &'static [u8; 64],
    padded: bool,
}

/// `base64.StdEncoding`: padded, `+` and `/`.
pub(crate) const STD: Encoding = Encoding {
    alphabet: b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
    padded: true,
};

/// `base64.RawURLEncoding`: unpadded, `-` and `_`.
pub(crate) const RAW_URL: Encoding = Encoding {
    alphabet: b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
    padded: false,
};

/// Go's `CorruptInputError` text.
fn corrupt(offset: usize) -> String {
    format!("illegal base64 data at input byte {offset}")
}

/// Encodes `bytes` as padded standard base64 (`base64.StdEncoding.EncodeToString`).
pub(crate) fn encode(bytes: &[u8]) -> String {
    STD.encode(bytes)
}

/// Decodes padded standard base64 (`base64.StdEncoding.DecodeString`).
pub(crate) fn decode(text: &str) -> Result<Vec<u8>, String> {
    STD.decode(text)
}

impl Encoding {
    fn sextet(&self, c: u8) -> Option<u8> {
        self.alphabet.iter().position(|&a| a == c).map(|i| i as u8)
    }

    /// `EncodeToString`.
    pub(crate) fn encode(&self, bytes: &[u8]) -> String {
        let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
        for chunk in bytes.chunks(3) {
            let mut b = [0u8; 3];
            b[..chunk.len()].copy_from_slice(chunk);
            let v = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
            for i in 0..4 {
                if i <= chunk.len() {
                    out.push(self.alphabet[(v >> (18 - 6 * i) & 63) as usize] as char);
                } else if self.padded {
                    out.push(PAD as char);
                }
            }
        }
        out
    }

    /// `DecodeString`, skipping `\r` and `\n` as Go does. Unpadded, a last quantum of two or
    /// three characters is whole and `=` is a character like any other outside the alphabet.
    pub(crate) fn decode(&self, text: &str) -> Result<Vec<u8>, String> {
        let src = text.as_bytes();
        let mut out = Vec::with_capacity(src.len() / 4 * 3);
        let mut quantum = [0u8; 4];
        let mut j = 0;
        let mut si = 0;
        let flush = |quantum: &mut [u8; 4], n: usize, out: &mut Vec<u8>| {
            quantum[n..].fill(0);
            let v = quantum
                .iter()
                .fold(0u32, |acc, &s| (acc << 6) | u32::from(s));
            out.extend_from_slice(&v.to_be_bytes()[1..n]);
        };
        while si < src.len() {
            let c = src[si];
            si += 1;
            if c == b'\r' || c == b'\n' {
                continue;
            }
            if c == PAD && self.padded {
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
                flush(&mut quantum, j, &mut out);
                return Ok(out);
            }
            let Some(s) = self.sextet(c) else {
                return Err(corrupt(si - 1));
            };
            quantum[j] = s;
            j += 1;
            if j == 4 {
                flush(&mut quantum, 4, &mut out);
                j = 0;
            }
        }
        match j {
            0 => Ok(out),
            2 | 3 if !self.padded => {
                flush(&mut quantum, j, &mut out);
                Ok(out)
            }
            _ => Err(corrupt(si - j)),
        }
    }
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
    fn raw_url_is_unpadded_and_url_safe() {
        use super::RAW_URL;
        assert_eq!(RAW_URL.encode(b"hi?"), "aGk_");
        assert_eq!(RAW_URL.encode(b"hi"), "aGk");
        assert_eq!(RAW_URL.decode("aGk").unwrap(), b"hi");
        assert_eq!(RAW_URL.decode("aGk_").unwrap(), b"hi?");
        assert_eq!(
            RAW_URL.decode("aGk=").unwrap_err(),
            "illegal base64 data at input byte 3"
        );
        assert_eq!(
            RAW_URL.decode("aGk_a").unwrap_err(),
            "illegal base64 data at input byte 4"
        );
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
