//! The Ballista example on small data: a scheduler and two executors in this process, on
//! loopback ports the system chooses, every side with the same GPU functions; SQL with a
//! scalar UDF in a projection and a filter and an aggregate UDF with `GROUP BY`, against
//! single-node DataFusion and the host. Bounded in time; the cluster stops when the test
//! ends, pass or fail (dropping it shuts its runtime down).
#![cfg(feature = "ballista")]

use std::time::Duration;

#[path = "../examples/cluster.rs"]
#[allow(dead_code)]
mod example;

#[tokio::test(flavor = "multi_thread")]
async fn a_cluster_answers_as_one_node_and_the_host_do() {
    let scratch = example::Scratch::new("gpu-datafusion-cluster-test");
    let report = tokio::time::timeout(Duration::from_secs(240), example::run(40_000, 3, &scratch.0))
        .await
        .expect("the cluster answered within 4 minutes")
        .unwrap();
    report.check().unwrap();
    let (n, lo, hi) = report.cluster.filtered;
    assert!(n > 1000 && n < 40_000 && lo < hi, "{:?}", report.cluster.filtered);
    assert_eq!(report.cluster.grouped.len(), example::GROUPS as usize);
    assert_eq!(report.cluster.grouped.iter().map(|g| g.2).sum::<i64>(), 40_000);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_plan_is_the_cluster_s_and_a_fault_comes_back_from_an_executor() {
    let scratch = example::Scratch::new("gpu-datafusion-cluster-fault");
    let work = async {
        let s = example::setup(20_000, 2, &scratch.0).await.unwrap();
        // The client plans a query for the scheduler, which runs it on the executors.
        let plan = s.remote.sql(example::GROUPED).await.unwrap().create_physical_plan().await.unwrap();
        let shown = datafusion::physical_plan::displayable(plan.as_ref()).indent(false).to_string();
        assert!(shown.contains("DistributedQueryExec"), "{shown}");
        // A division by zero inside an executor is the query's error, with our message.
        let e = s.remote.sql("SELECT sum(per_group(v, g)) FROM t").await.unwrap().collect().await.unwrap_err();
        let text = e.to_string();
        assert!(text.contains("per_group") && text.contains("attempt to divide by zero"), "{text}");
        // The cluster still answers after it.
        let n = s.remote.sql("SELECT count(*) FROM t WHERE g > 0").await.unwrap().collect().await.unwrap();
        let n = n[0].column(0).as_any().downcast_ref::<datafusion::arrow::array::Int64Array>().unwrap().value(0);
        assert_eq!(n, s.columns.g.iter().filter(|g| **g > 0).count() as i64);
    };
    tokio::time::timeout(Duration::from_secs(240), work).await.expect("within 4 minutes");
}

#[gpu_runtime::vectorize]
fn scale(x: f32, k: i32) -> f32 {
    x * k as f32
}

#[test]
fn a_cluster_without_executors_is_refused() {
    let e = gpu_datafusion::cluster::LocalCluster::start(&gpu_datafusion::cluster::Functions::new(), 0, 4).unwrap_err();
    assert!(e.to_string().contains("at least one executor"), "{e}");
}

#[test]
fn a_function_that_is_not_a_reduction_is_refused_as_an_aggregate() {
    let e = gpu_datafusion::cluster::Functions::new().aggregate(scale::COLUMNAR).unwrap_err();
    assert!(e.to_string().contains("scale"), "{e}");
}
