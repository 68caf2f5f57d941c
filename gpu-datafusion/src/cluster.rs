//! Queries over a Ballista cluster whose every side knows the same GPU functions.
//!
//! Ballista sends a query's plans from the client to the scheduler and from the scheduler
//! to the executors as protocol buffers, and a function travels by its name: each side
//! resolves the name in its own function registry. So every side registers the same
//! functions: [`Functions`] lists them once and gives each side its session state
//! ([`Functions::session_state`]). Nothing else is needed: no codec of our own, because a
//! UDF carries no state beyond its name (its device is chosen where it runs,
//! `Device::best()` unless the UDF says otherwise).
//!
//! [`LocalCluster`] starts a scheduler and executors in this process, on ports of the
//! loopback interface that the system chooses, for examples, tests and one-machine use; a
//! cluster of separate processes registers the same [`Functions`] in each (see the
//! README).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use ballista::prelude::SessionContextExt;
use ballista_core::extension::SessionConfigExt;
use ballista_core::serde::protobuf::scheduler_grpc_client::SchedulerGrpcClient;
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::{FunctionRegistry, SessionState, SessionStateBuilder};
use datafusion::logical_expr::{AggregateUDF, ScalarUDF};
use datafusion::prelude::{SessionConfig, SessionContext};
use gpu_runtime::columnar::Columnar;

/// The GPU functions a cluster's queries may call: registered alike on the client, the
/// scheduler and every executor.
#[derive(Clone, Debug, Default)]
pub struct Functions {
    scalars: Vec<Arc<ScalarUDF>>,
    aggregates: Vec<Arc<AggregateUDF>>,
}

impl Functions {
    pub fn new() -> Functions {
        Functions::default()
    }

    /// Adds `function` as a scalar UDF ([`crate::scalar_udf`]).
    pub fn scalar(mut self, function: Columnar) -> Functions {
        self.scalars.push(Arc::new(crate::scalar_udf(function)));
        self
    }

    /// Adds a reduction as an aggregate UDF ([`crate::aggregate_udf`]); a function that is
    /// not one is the error that function gives.
    pub fn aggregate(mut self, function: Columnar) -> Result<Functions> {
        self.aggregates.push(Arc::new(crate::aggregate_udf(function)?));
        Ok(self)
    }

    /// Registers the functions in `registry` (a `SessionContext`, a `SessionState`).
    pub fn register(&self, registry: &mut dyn FunctionRegistry) -> Result<()> {
        for f in &self.scalars {
            registry.register_udf(f.clone())?;
        }
        for f in &self.aggregates {
            registry.register_udaf(f.clone())?;
        }
        Ok(())
    }

    /// Registers the functions in `ctx` (a client of a cluster made with
    /// `SessionContext::remote`, whose state Ballista builds with its own functions).
    pub fn register_in(&self, ctx: &SessionContext) -> Result<()> {
        // A clone of a context shares its state.
        self.register(&mut ctx.clone())
    }

    /// A session state with Ballista's configuration (`config`, or the default), DataFusion's
    /// own functions and these: what the scheduler, each executor and the client are made
    /// from.
    pub fn session_state(&self, config: Option<SessionConfig>) -> Result<SessionState> {
        let config = config.unwrap_or_else(SessionConfig::new_with_ballista);
        let mut state = SessionStateBuilder::new().with_config(config).with_default_features().build();
        self.register(&mut state)?;
        Ok(state)
    }
}

/// A Ballista scheduler and executors running in this process, on loopback ports the
/// system chooses, until the cluster is dropped. They run on a Tokio runtime of their own,
/// which dropping the cluster shuts down: every server and task it started stops with it,
/// whether the caller's work succeeded or not.
pub struct LocalCluster {
    scheduler: SocketAddr,
    functions: Functions,
    runtime: Option<tokio::runtime::Runtime>,
}

impl std::fmt::Debug for LocalCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalCluster").field("scheduler", &self.scheduler).finish_non_exhaustive()
    }
}

/// How long a starting executor tries to reach the scheduler.
const CONNECT_FOR: Duration = Duration::from_secs(10);

impl LocalCluster {
    /// Starts a scheduler and `executors` executors of `tasks` concurrent tasks each, every
    /// one made from `functions.session_state(None)`. May be called from inside or
    /// outside an async runtime (the servers get one of their own).
    pub fn start(functions: &Functions, executors: usize, tasks: usize) -> Result<LocalCluster> {
        if executors == 0 {
            // Its queries would wait for an executor for ever.
            return Err(DataFusionError::Configuration("a cluster needs at least one executor".into()));
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("gpu-datafusion-cluster")
            .enable_all()
            .build()
            .map_err(|e| DataFusionError::External(Box::new(e)))?;
        let state = functions.session_state(None)?;
        let start = async move {
            let scheduler = ballista_scheduler::standalone::new_standalone_scheduler_from_state(&state)
                .await
                .map_err(|e| DataFusionError::External(Box::new(e)))?;
            let url = format!("http://localhost:{}", scheduler.port());
            for _ in 0..executors {
                let client = connect(&url).await?;
                ballista_executor::new_standalone_executor_from_state(client, tasks.max(1), &state)
                    .await
                    .map_err(|e| DataFusionError::External(Box::new(e)))?;
            }
            Ok::<SocketAddr, DataFusionError>(scheduler)
        };
        // Started from a thread of its own that waits on the cluster's runtime: a caller on
        // a thread of another runtime may not wait on one there (`block_on` panics).
        let scheduler = std::thread::scope(|s| {
            s.spawn(|| runtime.block_on(start))
                .join()
                .map_err(|_| DataFusionError::Internal("the cluster's start panicked".into()))?
        });
        let scheduler = match scheduler {
            Ok(s) => s,
            Err(e) => {
                runtime.shutdown_background();
                return Err(e);
            }
        };
        Ok(LocalCluster { scheduler, functions: functions.clone(), runtime: Some(runtime) })
    }

    /// The scheduler's address.
    pub fn scheduler(&self) -> SocketAddr {
        self.scheduler
    }

    /// The scheduler's URL, as `SessionContext::remote` takes it (`df://localhost:port`).
    pub fn url(&self) -> String {
        format!("df://localhost:{}", self.scheduler.port())
    }

    /// A client context of the cluster, with the functions registered: its queries are
    /// planned here and run on the executors.
    pub async fn context(&self) -> Result<SessionContext> {
        let ctx = SessionContext::remote_with_state(&self.url(), self.functions.session_state(None)?).await?;
        // Ballista's client state keeps its own list of functions: ours go in after.
        self.functions.register_in(&ctx)?;
        Ok(ctx)
    }
}

impl Drop for LocalCluster {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            // Callable from inside another runtime (a blocking shutdown is not): the
            // servers' tasks are dropped and their listeners closed.
            runtime.shutdown_background();
        }
    }
}

/// A client of the scheduler at `url`, once it answers (within [`CONNECT_FOR`]).
async fn connect(url: &str) -> Result<SchedulerGrpcClient<tonic::transport::Channel>> {
    let deadline = tokio::time::Instant::now() + CONNECT_FOR;
    loop {
        match SchedulerGrpcClient::connect(url.to_string()).await {
            Ok(c) => return Ok(c),
            Err(e) if tokio::time::Instant::now() >= deadline => {
                return Err(DataFusionError::Execution(format!("no Ballista scheduler at {url}: {e}")));
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}
