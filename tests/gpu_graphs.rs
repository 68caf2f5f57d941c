//! Graphs on the GPU: calls recorded once and replayed, against the same calls made one by
//! one; new data between replays, updated scalars and arrays, faults in a replay, dropped
//! arrays and dropped graphs, and what a graph refuses to record.

mod kernel_defs;

use gpu_runtime::{Device, DeviceVec, Error, Graph, LaunchConfig, vectorize};
use kernel_defs::{axpy, divide};

#[vectorize]
fn add(a: f32, b: f32) -> f32 {
    a + b
}

#[vectorize]
fn scale(x: f32, k: f32) -> f32 {
    x * k
}

#[vectorize]
fn quotient(a: i32, b: i32) -> i32 {
    a / b
}

fn gpu() -> Device {
    Device::cuda(0).expect("a CUDA GPU")
}

fn floats(n: usize, seed: u32) -> Vec<f32> {
    (0..n).map(|i| ((i as u32).wrapping_mul(2_654_435_761).wrapping_add(seed) % 1000) as f32 * 0.01 - 5.0).collect()
}

/// What the recorded chain computes, on the host: `c = a + b`, `d = c * k`, `e = 0.5 d + e`.
fn chain_on_host(a: &[f32], b: &[f32], k: f32, e: &mut [f32]) -> (Vec<f32>, Vec<f32>) {
    let c = add::cpu(a, b).unwrap();
    let d = scale::cpu(&c, k).unwrap();
    for (e, d) in e.iter_mut().zip(&d) {
        *e += 0.5 * d;
    }
    (c, d)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_graph_replays_its_calls_over_what_the_arrays_hold_now() {
    let device = gpu();
    let stream = device.new_stream().unwrap();
    let n = 100_003;
    let (ha, hb) = (floats(n, 1), floats(n, 2));
    let a = DeviceVec::from_slice_on(&device, &ha).unwrap();
    let b = DeviceVec::from_slice_on(&device, &hb).unwrap();
    let mut c = DeviceVec::<f32>::zeros_on(&device, n).unwrap();
    let mut d = DeviceVec::<f32>::zeros_on(&device, n).unwrap();
    let mut e = DeviceVec::<f32>::zeros_on(&device, n).unwrap();
    let mut graph = Graph::capture(&stream, |s| {
        add::launch_into(s, &mut c, &a, &b)?.wait()?;
        scale::launch_into(s, &mut d, &c, 3.0f32)?.wait()?;
        let cfg = LaunchConfig::new(n.div_ceil(256) as u32, 256u32).stream(s);
        axpy::launch_with(&cfg, 0.5, &d, &mut e)?.wait()
    })
    .unwrap();
    assert_eq!(graph.calls(), ["add", "scale", "axpy"]);
    // Recording ran nothing.
    assert!(c.to_vec().unwrap().iter().all(|&x| x == 0.0));
    let mut he = vec![0.0f32; n];
    graph.replay().unwrap();
    let (hc, hd) = chain_on_host(&ha, &hb, 3.0, &mut he);
    assert_eq!((c.to_vec().unwrap(), d.to_vec().unwrap(), e.to_vec().unwrap()), (hc, hd, he.clone()));
    // New inputs between replays; `e` accumulates, replay after replay.
    let mut a = a;
    let mut a_now = ha.clone();
    for round in 0..5u32 {
        a_now = floats(n, 10 + round);
        a.copy_from(&a_now).unwrap();
        graph.launch().unwrap();
        chain_on_host(&a_now, &hb, 3.0, &mut he);
    }
    graph.wait().unwrap();
    assert_eq!(e.to_vec().unwrap(), he);
    assert_eq!(c.to_vec().unwrap(), add::cpu(&a_now, &hb).unwrap());
    // The same results as the calls made one by one.
    let c1 = add::device(&a, &b).unwrap();
    assert_eq!(c1.to_vec().unwrap(), c.to_vec().unwrap());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn an_update_sets_new_scalars_and_arrays_and_a_wrong_one_is_refused() {
    let device = gpu();
    let stream = device.new_stream().unwrap();
    let n = 4096;
    let hx = floats(n, 3);
    let x = DeviceVec::from_slice_on(&device, &hx).unwrap();
    let mut y = DeviceVec::<f32>::zeros_on(&device, n).unwrap();
    let mut z = DeviceVec::<f32>::zeros_on(&device, n).unwrap();
    let mut graph = Graph::capture(&stream, |s| scale::launch_into(s, &mut y, &x, 2.0f32).map(drop)).unwrap();
    graph.replay().unwrap();
    assert_eq!(y.to_vec().unwrap(), scale::cpu(&hx, 2.0).unwrap());
    // A new scalar and another output array.
    graph.update(|s| scale::launch_into(s, &mut z, &x, -4.0f32).map(drop)).unwrap();
    graph.replay().unwrap();
    assert_eq!(z.to_vec().unwrap(), scale::cpu(&hx, -4.0).unwrap());
    assert_eq!(y.to_vec().unwrap(), scale::cpu(&hx, 2.0).unwrap(), "the old output is left alone");
    // Another function, another length, or another number of calls: refused, and the
    // graph replays nothing until an update succeeds.
    let e = graph.update(|s| add::launch_into(s, &mut z, &x, &x).map(drop)).unwrap_err();
    assert!(matches!(&e, Error::Graph { reason } if reason.contains("`add`")), "{e}");
    assert!(matches!(graph.replay(), Err(Error::Graph { .. })));
    // A length that needs another number of blocks is another launch shape: refused.
    let short = DeviceVec::from_slice_on(&device, &hx[..100]).unwrap();
    let mut out = DeviceVec::<f32>::zeros_on(&device, 100).unwrap();
    let e = graph.update(|s| scale::launch_into(s, &mut out, &short, 1.0f32).map(drop)).unwrap_err();
    assert!(matches!(&e, Error::Graph { reason } if reason.contains("launch shape")), "{e}");
    assert!(graph.update(|_| Ok(())).is_err());
    graph.update(|s| scale::launch_into(s, &mut y, &x, 0.25f32).map(drop)).unwrap();
    graph.replay().unwrap();
    assert_eq!(y.to_vec().unwrap(), scale::cpu(&hx, 0.25).unwrap());
    // One with the same number of blocks is the same shape: the call runs over the new
    // length.
    let shorter = DeviceVec::from_slice_on(&device, &hx[..n - 1]).unwrap();
    let mut out = DeviceVec::<f32>::zeros_on(&device, n - 1).unwrap();
    graph.update(|s| scale::launch_into(s, &mut out, &shorter, 8.0f32).map(drop)).unwrap();
    graph.replay().unwrap();
    assert_eq!(out.to_vec().unwrap(), scale::cpu(&hx[..n - 1], 8.0).unwrap());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_fault_in_a_replay_is_its_error_and_the_next_replay_starts_clean() {
    let device = gpu();
    let stream = device.new_stream().unwrap();
    let n = 10_000;
    let hx: Vec<i32> = (0..n as i32).map(|i| i * 7 - 3000).collect();
    let mut hd: Vec<i32> = (0..n as i32).map(|i| 1 + i % 13).collect();
    let x = DeviceVec::from_slice_on(&device, &hx).unwrap();
    let mut d = DeviceVec::from_slice_on(&device, &hd).unwrap();
    let mut q = DeviceVec::<i32>::zeros_on(&device, n).unwrap();
    let mut r = DeviceVec::<i32>::zeros_on(&device, n).unwrap();
    let mut graph = Graph::capture(&stream, |s| {
        quotient::launch_into(s, &mut q, &x, &d)?.wait()?;
        let cfg = LaunchConfig::new(n.div_ceil(128) as u32, 128u32).stream(s);
        divide::launch_with(&cfg, &x, &d, &mut r)?.wait()
    })
    .unwrap();
    graph.replay().unwrap();
    let want: Vec<i32> = hx.iter().zip(&hd).map(|(x, d)| x / d).collect();
    assert_eq!((q.to_vec().unwrap(), r.to_vec().unwrap()), (want.clone(), want.clone()));
    hd[7777] = 0;
    d.copy_from(&hd).unwrap();
    match graph.replay() {
        Err(Error::KernelFault { function: "quotient", index: 7777, message }) => {
            assert!(message.contains("divide by zero"), "{message}")
        }
        other => panic!("expected the elementwise call's fault, got {other:?}"),
    }
    // Queued replays: the wait reports the fault once they are done.
    graph.launch().unwrap();
    graph.launch().unwrap();
    assert!(matches!(graph.wait(), Err(Error::KernelFault { index: 7777, .. })));
    hd[7777] = 5;
    d.copy_from(&hd).unwrap();
    graph.replay().unwrap();
    let want: Vec<i32> = hx.iter().zip(&hd).map(|(x, d)| x / d).collect();
    assert_eq!((q.to_vec().unwrap(), r.to_vec().unwrap()), (want.clone(), want));
    // The kernel's own fault record: a graph of the kernel alone.
    let mut graph = Graph::capture(&stream, |s| {
        let cfg = LaunchConfig::new(n.div_ceil(128) as u32, 128u32).stream(s);
        divide::launch_with(&cfg, &x, &d, &mut r)?.wait()
    })
    .unwrap();
    graph.replay().unwrap();
    hd[1234] = 0;
    d.copy_from(&hd).unwrap();
    match graph.replay() {
        Err(Error::ThreadFault { kernel: "divide", block, thread, message }) => {
            assert_eq!((block[0] * 128 + thread[0], message.as_str()), (1234, "attempt to divide by zero"))
        }
        other => panic!("expected the kernel's fault, got {other:?}"),
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_dropped_array_stops_the_graph_and_a_dropped_graph_waits_for_its_replays() {
    let device = gpu();
    let stream = device.new_stream().unwrap();
    let n = 1 << 20;
    let hx = floats(n, 5);
    let x = DeviceVec::from_slice_on(&device, &hx).unwrap();
    let mut y = DeviceVec::<f32>::zeros_on(&device, n).unwrap();
    let mut graph = Graph::capture(&stream, |s| scale::launch_into(s, &mut y, &x, 2.0f32).map(drop)).unwrap();
    for _ in 0..50 {
        graph.launch().unwrap();
    }
    // Dropped with replays queued: it waits for them; the arrays stay good.
    drop(graph);
    assert_eq!(y.to_vec().unwrap(), scale::cpu(&hx, 2.0).unwrap());
    let mut graph = Graph::capture(&stream, |s| scale::launch_into(s, &mut y, &x, 3.0f32).map(drop)).unwrap();
    graph.launch().unwrap();
    // The array is freed after the queued replay, and the graph refuses to run again.
    drop(y);
    match graph.replay() {
        Err(Error::Graph { reason }) => assert!(reason.contains("dropped"), "{reason}"),
        other => panic!("expected the graph to refuse, got {other:?}"),
    }
    graph.wait().unwrap();
    assert_eq!(x.to_vec().unwrap(), hx);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn what_a_graph_cannot_hold_is_refused() {
    let device = gpu();
    let stream = device.new_stream().unwrap();
    let n = 1000;
    let hx = floats(n, 6);
    let x = DeviceVec::from_slice_on(&device, &hx).unwrap();
    let mut y = DeviceVec::<f32>::zeros_on(&device, n).unwrap();
    let graph_error = |r: gpu_runtime::Result<Graph>| match r {
        Err(Error::Graph { reason }) => reason,
        other => panic!("expected a graph error, got {other:?}"),
    };
    // Host memory, as an argument, as an output, or a host slice of a kernel.
    let reason = graph_error(Graph::capture(&stream, |s| scale::launch_into(s, &mut y, &hx[..], 2.0f32).map(drop)));
    assert!(reason.contains("device arrays"), "{reason}");
    let mut host = vec![0.0f32; n];
    let reason = graph_error(Graph::capture(&stream, |s| scale::launch_into(s, &mut host[..], &x, 2.0f32).map(drop)));
    assert!(reason.contains("device arrays"), "{reason}");
    let reason = graph_error(Graph::capture(&stream, |s| {
        let cfg = LaunchConfig::new(4u32, 256u32).stream(s);
        axpy::launch_with(&cfg, 1.0, &hx, &mut y)?.wait()
    }));
    assert!(reason.contains("device arrays"), "{reason}");
    // A call that returns new host results, or new device arrays.
    graph_error(Graph::capture(&stream, |s| scale::launch(s, &x, 2.0f32)?.wait().map(drop)));
    graph_error(Graph::capture(&stream, |s| scale::launch_device(s, &x, 2.0f32)?.wait().map(drop)));
    // A recording stream kept past its recording records nothing: the capture fails, and
    // so does every later call on the copy.
    let mut kept = None;
    graph_error(Graph::capture(&stream, |s| {
        kept = Some(s.clone());
        Ok(())
    }));
    let kept = kept.unwrap();
    assert!(matches!(scale::launch_into(&kept, &mut y, &x, 2.0f32), Err(Error::Graph { .. })));
    // A graph is not recorded on a recording stream, nor on the CPU device.
    graph_error(Graph::capture(&stream, |s| Graph::capture(s, |_| Ok(())).map(drop)));
    graph_error(Graph::capture(&Device::cpu().new_stream().unwrap(), |_| Ok(())));
    // An error inside the recording is the capture's.
    let e = Graph::capture(&stream, |_| Err(Error::Graph { reason: "mine".into() })).unwrap_err();
    assert!(e.to_string().contains("mine"));
    // An empty graph replays nothing, fine.
    let mut empty = Graph::capture(&stream, |_| Ok(())).unwrap();
    empty.replay().unwrap();
    assert!(empty.calls().is_empty());
}
