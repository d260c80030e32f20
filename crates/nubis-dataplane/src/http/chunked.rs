//! Message body framing of HTTP/1.1 (RFC 9112 §6, §7): fixed length, chunked (parsed
//! incrementally so the proxy knows where a message ends while forwarding it unchanged, or
//! decoded for an HTTP/1.0 client), or until the connection closes.
//!
//! The chunked grammar is applied strictly (RFC 9112 §7.1):
//! - every line of the framing ends with CRLF; a bare LF or CR is refused (the header section,
//!   parsed by `httparse`, accepts a bare LF as the RFC allows; the chunked framing does not,
//!   since proxies disagreeing on it is what chunk-based smuggling relies on);
//! - `chunk-size` is `1*HEXDIG` (leading zeros allowed), below 2^60;
//! - `chunk-ext` is exactly `*( BWS ";" BWS token [ BWS "=" BWS ( token / quoted-string ) ] )`:
//!   no whitespace after the size unless a `;` follows, no empty extension name, no value-less `=`;
//! - the size line is at most [`MAX_SIZE_LINE`] bytes, the trailer section [`MAX_TRAILERS`];
//! - a trailer field is `token ":" OWS value CRLF`, the value made of VCHAR, obs-text, SP and
//!   HTAB: no obs-fold, no whitespace before the colon, no other control character.

use super::framing::is_tchar;

/// Malformed chunked framing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BadChunk;

/// Longest chunk-size line (size, extensions), CRLF excluded.
pub(crate) const MAX_SIZE_LINE: u32 = 4096;
/// Largest trailer section.
pub(crate) const MAX_TRAILERS: u32 = 16 * 1024;
/// Chunk sizes from this one up are refused.
const MAX_CHUNK: u64 = 1 << 60;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum St {
    /// The first hex digit of a chunk size.
    SizeFirst,
    /// More hex digits, or what follows them.
    Size,
    /// Whitespace after the size: a `;` must follow.
    ExtBws,
    /// After `;`: optional whitespace, then an extension name.
    ExtNameStart,
    ExtName,
    /// Whitespace after a name: `=` or `;` must follow.
    ExtNameEnd,
    /// After `=`: optional whitespace, then a token or a quoted string.
    ExtValStart,
    ExtToken,
    ExtQuoted,
    ExtQuotedEsc,
    /// Right after a value: `;`, whitespace or CR.
    ExtAfterVal,
    /// Whitespace after a value: a `;` must follow.
    ExtValBws,
    SizeLf,
    Data,
    DataCr,
    DataLf,
    TrailerStart,
    TrailerName,
    TrailerValue,
    TrailerLf,
    EndLf,
    Done,
}

/// Incremental parser of a chunked body.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Chunked {
    st: St,
    size: u64,
    /// Bytes of the current size line, or of the trailer section.
    line: u32,
}

fn is_ws(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

fn is_qdtext(b: u8) -> bool {
    matches!(b, b'\t' | b' ' | 0x21 | 0x23..=0x5b | 0x5d..=0x7e | 0x80..=0xff)
}

fn is_field_vchar(b: u8) -> bool {
    matches!(b, b'\t' | b' '..=0x7e | 0x80..=0xff)
}

impl Chunked {
    pub(crate) fn new() -> Chunked {
        Chunked { st: St::SizeFirst, size: 0, line: 0 }
    }

    /// Consumes bytes of the body; `Some(n)` when the body ended after the first `n` bytes.
    /// `on_data(start, end)` is called with each range of `data` that is chunk data.
    pub(crate) fn feed(
        &mut self,
        data: &[u8],
        mut on_data: impl FnMut(usize, usize),
    ) -> Result<Option<usize>, BadChunk> {
        let mut i = 0;
        while i < data.len() {
            if self.st == St::Data {
                let take = self.size.min((data.len() - i) as u64) as usize;
                on_data(i, i + take);
                self.size -= take as u64;
                i += take;
                if self.size == 0 {
                    self.st = St::DataCr;
                }
                continue;
            }
            if self.st == St::Done {
                return Ok(Some(i));
            }
            self.step(data[i])?;
            i += 1;
            if self.st == St::Done {
                return Ok(Some(i));
            }
        }
        Ok(if self.st == St::Done { Some(data.len()) } else { None })
    }

    /// One byte of framing (anything but chunk data).
    fn step(&mut self, b: u8) -> Result<(), BadChunk> {
        self.st = match self.st {
            St::SizeFirst | St::Size | St::ExtBws => self.size_byte(b)?,
            St::ExtNameStart
            | St::ExtName
            | St::ExtNameEnd
            | St::ExtValStart
            | St::ExtToken
            | St::ExtQuoted
            | St::ExtQuotedEsc
            | St::ExtAfterVal
            | St::ExtValBws => self.ext_byte(b)?,
            St::SizeLf if b == b'\n' => match self.size {
                0 => {
                    self.line = 0;
                    St::TrailerStart
                }
                _ => St::Data,
            },
            St::DataCr if b == b'\r' => St::DataLf,
            St::DataLf if b == b'\n' => {
                *self = Chunked::new();
                St::SizeFirst
            }
            St::TrailerStart | St::TrailerName | St::TrailerValue | St::TrailerLf => self.trailer_byte(b)?,
            St::EndLf if b == b'\n' => St::Done,
            _ => return Err(BadChunk),
        };
        Ok(())
    }

    fn count_line(&mut self, max: u32) -> Result<(), BadChunk> {
        self.line += 1;
        if self.line > max { Err(BadChunk) } else { Ok(()) }
    }

    fn size_byte(&mut self, b: u8) -> Result<St, BadChunk> {
        self.count_line(MAX_SIZE_LINE)?;
        Ok(match (self.st, b) {
            (St::SizeFirst | St::Size, b'0'..=b'9' | b'a'..=b'f' | b'A'..=b'F') => {
                let d = (b as char).to_digit(16).unwrap_or(0) as u64;
                self.size = self.size * 16 + d;
                if self.size >= MAX_CHUNK {
                    return Err(BadChunk);
                }
                St::Size
            }
            (St::Size, b'\r') => St::SizeLf,
            (St::Size | St::ExtBws, b';') => St::ExtNameStart,
            (St::Size | St::ExtBws, b' ' | b'\t') => St::ExtBws,
            _ => return Err(BadChunk),
        })
    }

    fn ext_byte(&mut self, b: u8) -> Result<St, BadChunk> {
        self.count_line(MAX_SIZE_LINE)?;
        Ok(match self.st {
            St::ExtNameStart if is_ws(b) => St::ExtNameStart,
            St::ExtNameStart | St::ExtName if is_tchar(b) => St::ExtName,
            St::ExtName | St::ExtNameEnd if is_ws(b) => St::ExtNameEnd,
            St::ExtName | St::ExtNameEnd if b == b'=' => St::ExtValStart,
            St::ExtName | St::ExtNameEnd | St::ExtAfterVal | St::ExtValBws if b == b';' => St::ExtNameStart,
            St::ExtName | St::ExtAfterVal if b == b'\r' => St::SizeLf,
            St::ExtValStart if is_ws(b) => St::ExtValStart,
            St::ExtValStart if b == b'"' => St::ExtQuoted,
            St::ExtValStart | St::ExtToken if is_tchar(b) => St::ExtToken,
            St::ExtToken if b == b';' => St::ExtNameStart,
            St::ExtToken if b == b'\r' => St::SizeLf,
            St::ExtToken | St::ExtAfterVal | St::ExtValBws if is_ws(b) => St::ExtValBws,
            St::ExtQuoted if b == b'"' => St::ExtAfterVal,
            St::ExtQuoted if b == b'\\' => St::ExtQuotedEsc,
            St::ExtQuoted if is_qdtext(b) => St::ExtQuoted,
            St::ExtQuotedEsc if is_field_vchar(b) => St::ExtQuoted,
            _ => return Err(BadChunk),
        })
    }

    fn trailer_byte(&mut self, b: u8) -> Result<St, BadChunk> {
        self.count_line(MAX_TRAILERS)?;
        Ok(match self.st {
            St::TrailerStart if b == b'\r' => St::EndLf,
            St::TrailerStart | St::TrailerName if is_tchar(b) => St::TrailerName,
            St::TrailerName if b == b':' => St::TrailerValue,
            St::TrailerValue if b == b'\r' => St::TrailerLf,
            St::TrailerValue if is_field_vchar(b) => St::TrailerValue,
            St::TrailerLf if b == b'\n' => St::TrailerStart,
            _ => return Err(BadChunk),
        })
    }
}

/// How a message body ends.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Framing {
    Empty,
    Length(u64),
    Chunked(Chunked),
    UntilClose,
}

impl Framing {
    /// Takes body bytes from `data`: how many belong to the body, and whether the body ended.
    pub(crate) fn take(&mut self, data: &[u8]) -> Result<(usize, bool), BadChunk> {
        self.take_with(data, |_, _| {})
    }

    /// As [`Framing::take`], appending the payload (chunk data, without the framing) to `out`.
    pub(crate) fn take_decoded(&mut self, data: &[u8], out: &mut Vec<u8>) -> Result<(usize, bool), BadChunk> {
        match self {
            Framing::Chunked(_) => self.take_with(data, |s, e| out.extend_from_slice(&data[s..e])),
            _ => {
                let r = self.take(data)?;
                out.extend_from_slice(&data[..r.0]);
                Ok(r)
            }
        }
    }

    fn take_with(&mut self, data: &[u8], on_data: impl FnMut(usize, usize)) -> Result<(usize, bool), BadChunk> {
        match self {
            Framing::Empty => Ok((0, true)),
            Framing::Length(rem) => {
                let k = (*rem).min(data.len() as u64);
                *rem -= k;
                Ok((k as usize, *rem == 0))
            }
            Framing::Chunked(p) => Ok(match p.feed(data, on_data)? {
                Some(n) => (n, true),
                None => (data.len(), false),
            }),
            Framing::UntilClose => Ok((data.len(), false)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(body: &[u8]) -> Result<Option<usize>, BadChunk> {
        Chunked::new().feed(body, |_, _| {})
    }

    #[test]
    fn whole_body_in_one_piece() {
        let body = b"4\r\nWiki\r\n5;ext=1\r\npedia\r\n0\r\n\r\nGET / HTTP/1.1";
        let end = body.len() - b"GET / HTTP/1.1".len();
        assert_eq!(whole(body), Ok(Some(end)));
    }

    #[test]
    fn byte_by_byte_with_trailers_and_decoding() {
        let body = b"a\r\n0123456789\r\n3 ; q = \"a\\\"b\" ;r\r\nabc\r\n0\r\nX-T: 1\r\n\r\n";
        let mut p = Chunked::new();
        let mut decoded = Vec::new();
        for (i, b) in body.iter().enumerate() {
            let r = p.feed(std::slice::from_ref(b), |s, e| decoded.extend_from_slice(&[*b][s..e])).unwrap();
            assert_eq!(r, if i + 1 == body.len() { Some(1) } else { None }, "at {i}");
        }
        assert_eq!(decoded, b"0123456789abc");
    }

    #[test]
    fn valid_forms() {
        for ok in [
            &b"0\r\n\r\n"[..],
            b"0000000000000000000003\r\nabc\r\n0\r\n\r\n",
            b"A\r\n0123456789\r\n0\r\n\r\n",
            b"3;a\r\nabc\r\n0;b=c\r\n\r\n",
            b"3 ;a=b\r\nabc\r\n0\r\n\r\n",
            b"3;a=\"\"\r\nabc\r\n0\r\n\r\n",
            b"3\r\nabc\r\n0\r\nA: \r\nB:x y\t\r\n\r\n",
        ] {
            assert!(matches!(whole(ok), Ok(Some(n)) if n == ok.len()), "{}", String::from_utf8_lossy(ok));
        }
    }

    #[test]
    fn malformed_is_refused() {
        for bad in [
            &b"zz\r\n"[..],
            b"\r\n",
            b"0x3\r\nabc\r\n",
            b"-1\r\n",
            b" 3\r\nabc\r\n",
            b"3 \r\nabc\r\n",
            b"3\nabc\r\n",
            b"3\r\nabc\n0\r\n\r\n",
            b"3\r\nabcX",
            b"3\rabc",
            b"3;\r\nabc\r\n",
            b"3;a=\r\nabc\r\n",
            b"3;a b\r\n",
            b"3;a\nb\r\n",
            b"3;a=\"b\r\n",
            b"3;a=b c\r\n",
            b"3;a \r\n",
            b"ffffffffffffffffff\r\n",
            b"1000000000000000\r\n",
            b"0\r\n\n",
            b"0\r\nX-T 1\r\n\r\n",
            b"0\r\nX-T : 1\r\n\r\n",
            b"0\r\nX-T: 1\r\n 2\r\n\r\n",
            b"0\r\nX-T: a\x00b\r\n\r\n",
            b"0\r\nX-T: 1\n\r\n",
            b"0\r\n: 1\r\n\r\n",
        ] {
            assert_eq!(whole(bad).err(), Some(BadChunk), "{}", String::from_utf8_lossy(bad).escape_debug());
        }
    }

    #[test]
    fn limits() {
        let mut long = b"1;".to_vec();
        long.extend(std::iter::repeat_n(b'a', MAX_SIZE_LINE as usize));
        assert_eq!(whole(&long).err(), Some(BadChunk));
        let mut trailers = b"0\r\n".to_vec();
        while trailers.len() < MAX_TRAILERS as usize + 100 {
            trailers.extend_from_slice(b"X-Trailer: aaaaaaaaaaaaaaaaaaaa\r\n");
        }
        assert_eq!(whole(&trailers).err(), Some(BadChunk));
    }

    #[test]
    fn length_framing() {
        let mut f = Framing::Length(5);
        assert_eq!(f.take(b"abc").unwrap(), (3, false));
        assert_eq!(f.take(b"defgh").unwrap(), (2, true));
    }

    #[test]
    fn decoding_keeps_the_payload_only() {
        let mut f = Framing::Chunked(Chunked::new());
        let mut out = Vec::new();
        assert_eq!(f.take_decoded(b"3\r\nabc\r\n2;x=y\r\nde", &mut out).unwrap(), (17, false));
        assert_eq!(f.take_decoded(b"\r\n0\r\n\r\nnext", &mut out).unwrap(), (7, true));
        assert_eq!(out, b"abcde");
    }
}
