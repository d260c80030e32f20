//! The default driver: no machine behind it, each step simply takes its configured time.

use nubis_model::config::RuntimeConfig;

use super::{Driver, DriverFuture, Step};

/// Simulates power transitions with the delays of `[runtime]` in the configuration.
#[derive(Debug, Clone)]
pub struct SimulatedDriver {
    config: RuntimeConfig,
}

impl SimulatedDriver {
    pub fn new(config: RuntimeConfig) -> SimulatedDriver {
        SimulatedDriver { config }
    }
}

impl Driver for SimulatedDriver {
    fn run(&self, _instance_id: i64, step: Step) -> DriverFuture {
        let delay = step.least(&self.config);
        Box::pin(async move {
            tokio::time::sleep(delay).await;
            Ok(())
        })
    }
}
