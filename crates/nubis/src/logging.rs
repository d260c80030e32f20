//! Logging: tracing to stderr through a shared in-memory buffer that a background thread writes
//! out every few milliseconds (or sooner when it fills up). A request only appends its line
//! under a short lock: no system call, no thread wake-up per line, which matters at tens of
//! thousands of access-log lines per second.

use std::io::Write;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;

use crate::cli::LogFormat;

const FLUSH_EVERY: Duration = Duration::from_millis(50);
/// Above this many buffered bytes the writer thread is woken at once.
const WAKE_AT: usize = 256 * 1024;
/// Above this many buffered bytes appenders wait for the writer (backpressure, nothing dropped).
const HARD_LIMIT: usize = 8 * 1024 * 1024;

struct Shared {
    buf: Mutex<Vec<u8>>,
    /// Held while writing to stderr, so the final flush waits for a write in progress.
    io: Mutex<()>,
    wake: Condvar,
    drained: Condvar,
}

#[derive(Clone)]
pub struct BatchWriter(Arc<Shared>);

/// Flushes what is buffered when dropped (keep it alive until the end of `main`).
pub struct Guard(Arc<Shared>);

impl BatchWriter {
    fn start() -> (BatchWriter, Guard) {
        let shared = Arc::new(Shared {
            buf: Mutex::new(Vec::with_capacity(64 * 1024)),
            io: Mutex::new(()),
            wake: Condvar::new(),
            drained: Condvar::new(),
        });
        let s = shared.clone();
        std::thread::Builder::new()
            .name("nubis-log".into())
            .spawn(move || {
                let mut out = Vec::with_capacity(64 * 1024);
                loop {
                    let _io = {
                        let guard = s.buf.lock().unwrap_or_else(|e| e.into_inner());
                        let (mut guard, _) = s.wake.wait_timeout(guard, FLUSH_EVERY).unwrap_or_else(|e| e.into_inner());
                        std::mem::swap(&mut *guard, &mut out);
                        s.drained.notify_all();
                        s.io.lock().unwrap_or_else(|e| e.into_inner())
                    };
                    flush(&mut out);
                    if Arc::strong_count(&s) == 1 {
                        return;
                    }
                }
            })
            .expect("start the log writer thread");
        (BatchWriter(shared.clone()), Guard(shared))
    }
}

fn flush(out: &mut Vec<u8>) {
    if !out.is_empty() {
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(out);
        let _ = err.flush();
        out.clear();
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        let mut rest = std::mem::take(&mut *self.0.buf.lock().unwrap_or_else(|e| e.into_inner()));
        let _io = self.0.io.lock().unwrap_or_else(|e| e.into_inner());
        flush(&mut rest);
    }
}

impl Write for BatchWriter {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        let mut buf = self.0.buf.lock().unwrap_or_else(|e| e.into_inner());
        while buf.len() > HARD_LIMIT {
            self.0.wake.notify_one();
            buf = self.0.drained.wait(buf).unwrap_or_else(|e| e.into_inner());
        }
        let before = buf.len();
        buf.extend_from_slice(data);
        // Wake the writer once, when the buffer crosses the threshold (not on every line after).
        if before < WAKE_AT && buf.len() >= WAKE_AT {
            self.0.wake.notify_one();
        }
        Ok(data.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for BatchWriter {
    type Writer = BatchWriter;
    fn make_writer(&'a self) -> BatchWriter {
        self.clone()
    }
}

/// Installs the subscriber. Level from `NUBIS_LOG` (default `info`).
pub fn init(format: LogFormat) -> Guard {
    use std::io::IsTerminal;
    let filter = EnvFilter::try_from_env("NUBIS_LOG").unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn"));
    let (writer, guard) = BatchWriter::start();
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_ansi(std::io::stderr().is_terminal());
    let _ = match format {
        LogFormat::Json => builder.json().try_init(),
        LogFormat::Text => builder.try_init(),
    };
    guard
}
