//! Proxy worker threads: each runs its own single-threaded tokio event loop, and every listener
//! has one `SO_REUSEPORT` socket per worker, so the kernel spreads new connections over the
//! workers and a connection never moves between threads (no work-stealing wake-ups on the hot
//! path). Health checks, reconcile and stats stay on the caller's runtime.

use std::cell::Cell;
use std::sync::Mutex;
use std::thread::JoinHandle;

use tokio::runtime::Handle;
use tokio::sync::oneshot;

thread_local! {
    static WORKER: Cell<usize> = const { Cell::new(0) };
}

/// Index of the proxy worker running this code (0 outside workers).
pub(crate) fn current() -> usize {
    WORKER.with(Cell::get)
}

#[derive(Debug, Default)]
pub(crate) struct Workers {
    pub(crate) handles: Vec<Handle>,
    threads: Mutex<Vec<(oneshot::Sender<()>, JoinHandle<()>)>>,
}

impl Workers {
    /// Starts `n` workers (none when `n` is 0: everything runs on the caller's runtime).
    pub(crate) fn start(n: usize) -> Workers {
        let mut handles = Vec::with_capacity(n);
        let mut threads = Vec::with_capacity(n);
        for i in 0..n {
            let (stop_tx, stop_rx) = oneshot::channel::<()>();
            let (h_tx, h_rx) = std::sync::mpsc::channel();
            let spawned = std::thread::Builder::new().name(format!("nubis-dp-{i}")).spawn(move || {
                WORKER.with(|w| w.set(i));
                let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
                    Ok(rt) => rt,
                    Err(e) => {
                        tracing::error!(error = %e, "data plane worker runtime failed to start");
                        return;
                    }
                };
                let _ = h_tx.send(rt.handle().clone());
                rt.block_on(async move {
                    let _ = stop_rx.await;
                });
            });
            match spawned {
                Ok(t) => match h_rx.recv() {
                    Ok(h) => {
                        handles.push(h);
                        threads.push((stop_tx, t));
                    }
                    Err(_) => tracing::error!("data plane worker {i} did not start"),
                },
                Err(e) => tracing::error!(error = %e, "data plane worker thread failed to start"),
            }
        }
        Workers { handles, threads: Mutex::new(threads) }
    }

    /// Ends the worker threads (their remaining tasks are dropped) and waits for them.
    pub(crate) async fn stop(&self) {
        let threads: Vec<_> = std::mem::take(&mut *self.threads.lock().unwrap_or_else(|e| e.into_inner()));
        if threads.is_empty() {
            return;
        }
        let _ = tokio::task::spawn_blocking(move || {
            for (stop, t) in threads {
                let _ = stop.send(());
                let _ = t.join();
            }
        })
        .await;
    }
}
