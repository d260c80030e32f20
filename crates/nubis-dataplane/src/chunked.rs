//! Message body framing of HTTP/1.1: fixed length, chunked (parsed incrementally so the proxy
//! knows where a message ends while forwarding it unchanged), or until the connection closes.

/// Malformed chunked framing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BadChunk;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum St {
    Size,
    Ext,
    SizeLf,
    Data,
    DataCr,
    DataLf,
    TrailerStart,
    TrailerLine,
    EndLf,
    Done,
}

/// Incremental parser of a chunked body.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Chunked {
    st: St,
    size: u64,
    digits: u8,
}

impl Chunked {
    pub(crate) fn new() -> Chunked {
        Chunked { st: St::Size, size: 0, digits: 0 }
    }

    /// Consumes bytes of the body; `Some(n)` when the body ended after the first `n` bytes.
    pub(crate) fn feed(&mut self, data: &[u8]) -> Result<Option<usize>, BadChunk> {
        let mut i = 0;
        while i < data.len() {
            let b = data[i];
            match self.st {
                St::Size => match b {
                    b'0'..=b'9' | b'a'..=b'f' | b'A'..=b'F' => {
                        let d = (b as char).to_digit(16).unwrap_or(0) as u64;
                        self.digits += 1;
                        if self.digits > 15 {
                            return Err(BadChunk);
                        }
                        self.size = self.size * 16 + d;
                    }
                    b';' | b' ' | b'\t' if self.digits > 0 => self.st = St::Ext,
                    b'\r' if self.digits > 0 => self.st = St::SizeLf,
                    _ => return Err(BadChunk),
                },
                St::Ext => match b {
                    b'\r' => self.st = St::SizeLf,
                    b'\n' => self.after_size(),
                    _ => {}
                },
                St::SizeLf => {
                    if b != b'\n' {
                        return Err(BadChunk);
                    }
                    self.after_size();
                }
                St::Data => {
                    let take = (self.size as usize).min(data.len() - i);
                    self.size -= take as u64;
                    i += take;
                    if self.size == 0 {
                        self.st = St::DataCr;
                    }
                    continue;
                }
                St::DataCr => {
                    if b != b'\r' {
                        return Err(BadChunk);
                    }
                    self.st = St::DataLf;
                }
                St::DataLf => {
                    if b != b'\n' {
                        return Err(BadChunk);
                    }
                    *self = Chunked::new();
                }
                St::TrailerStart => match b {
                    b'\r' => self.st = St::EndLf,
                    b'\n' => {
                        self.st = St::Done;
                        return Ok(Some(i + 1));
                    }
                    _ => self.st = St::TrailerLine,
                },
                St::TrailerLine => {
                    if b == b'\n' {
                        self.st = St::TrailerStart;
                    }
                }
                St::EndLf => {
                    if b != b'\n' {
                        return Err(BadChunk);
                    }
                    self.st = St::Done;
                    return Ok(Some(i + 1));
                }
                St::Done => return Ok(Some(i)),
            }
            i += 1;
        }
        Ok(if self.st == St::Done { Some(data.len()) } else { None })
    }

    fn after_size(&mut self) {
        self.st = if self.size == 0 { St::TrailerStart } else { St::Data };
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
        match self {
            Framing::Empty => Ok((0, true)),
            Framing::Length(rem) => {
                let k = (*rem).min(data.len() as u64);
                *rem -= k;
                Ok((k as usize, *rem == 0))
            }
            Framing::Chunked(p) => Ok(match p.feed(data)? {
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

    #[test]
    fn whole_body_in_one_piece() {
        let body = b"4\r\nWiki\r\n5;ext=1\r\npedia\r\n0\r\n\r\nGET / HTTP/1.1";
        let end = body.len() - b"GET / HTTP/1.1".len();
        assert_eq!(Chunked::new().feed(body), Ok(Some(end)));
    }

    #[test]
    fn byte_by_byte_with_trailers() {
        let body = b"a\r\n0123456789\r\n0\r\nX-T: 1\r\n\r\n";
        let mut p = Chunked::new();
        for (i, b) in body.iter().enumerate() {
            let r = p.feed(std::slice::from_ref(b)).unwrap();
            if i + 1 == body.len() {
                assert_eq!(r, Some(1));
            } else {
                assert_eq!(r, None, "at {i}");
            }
        }
    }

    #[test]
    fn malformed_is_refused() {
        assert!(Chunked::new().feed(b"zz\r\n").is_err());
        assert!(Chunked::new().feed(b"\r\n").is_err());
        assert!(Chunked::new().feed(b"2\r\nabX").is_err());
        assert!(Chunked::new().feed(b"ffffffffffffffffff\r\n").is_err());
    }

    #[test]
    fn length_framing() {
        let mut f = Framing::Length(5);
        assert_eq!(f.take(b"abc").unwrap(), (3, false));
        assert_eq!(f.take(b"defgh").unwrap(), (2, true));
    }
}
