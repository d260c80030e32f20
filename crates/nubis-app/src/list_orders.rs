//! Deep pages in a field's order: nubis places the order fences (nubis-store `fences`) outside
//! any request, one range per transaction, so that a page skips fewer rows than a range holds.

use nubis_model::Result;

use crate::App;

impl App {
    /// Cuts every range of an order that grew past its bound and drops the empty ones; returns
    /// how many it placed or dropped.
    pub async fn list_orders_place_due(&self) -> Result<u64> {
        let due = self.store.fences_due().await?;
        for d in &due {
            self.write(|tx| {
                let d = d.clone();
                Box::pin(async move { tx.fence_place(&d).await })
            })
            .await?;
        }
        Ok(due.len() as u64)
    }

    /// Runs [`App::list_orders_place_due`] every `every` until aborted (`nubis serve`).
    pub fn spawn_list_order_keeper(&self, every: std::time::Duration) -> tokio::task::JoinHandle<()> {
        let app = self.clone();
        tokio::spawn(async move {
            loop {
                if let Err(e) = app.list_orders_place_due().await {
                    tracing::warn!(error = %e, "placing the order fences of the lists failed");
                }
                tokio::time::sleep(every).await;
            }
        })
    }
}
