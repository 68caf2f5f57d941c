//! A chain of short calls, made one by one and replayed as a graph (issue: past the launch
//! floor). `c[0] = a + b`, then `c[k] = c[k - 1] + b`, over `n` f32 elements, on one GPU.
//! Prints a readable line per way, then one JSON object on the last line
//! (`bench/graph_compare.py` runs the same chain in PyTorch, eagerly and as a CUDA graph).
//!
//!     cargo run --release --bin graph_chain [n [calls [replays]]]   (1024, 10, 20000)

use std::time::Instant;

use gpu_runtime::{Device, DeviceVec, Graph, vectorize};

#[vectorize(target = "cuda")]
fn add(a: f32, b: f32) -> f32 {
    a + b
}

fn main() -> gpu_runtime::Result<()> {
    let args: Vec<usize> = std::env::args().skip(1).map(|a| a.parse().expect("a count")).collect();
    let n = args.first().copied().unwrap_or(1024);
    let calls = args.get(1).copied().unwrap_or(10).max(1);
    let reps = args.get(2).copied().unwrap_or(20_000).max(1);
    let device = Device::cuda(0)?;
    let stream = device.new_stream()?;
    let ha: Vec<f32> = (0..n).map(|i| (i % 97) as f32 * 0.5).collect();
    let hb: Vec<f32> = (0..n).map(|i| (i % 13) as f32 * 0.25).collect();
    let a = DeviceVec::from_slice_on(&device, &ha)?;
    let b = DeviceVec::from_slice_on(&device, &hb)?;
    let mut c: Vec<DeviceVec<f32>> = (0..calls).map(|_| DeviceVec::zeros_on(&device, n)).collect::<Result<_, _>>()?;

    // One by one: each `into` over device arrays returns once its kernel is queued.
    let chain = |c: &mut [DeviceVec<f32>]| -> gpu_runtime::Result<()> {
        add::into(&mut c[0], &a, &b)?;
        for k in 1..c.len() {
            let (done, rest) = c.split_at_mut(k);
            add::into(&mut rest[0], &done[k - 1], &b)?;
        }
        Ok(())
    };
    for _ in 0..100 {
        chain(&mut c)?;
    }
    device.synchronize()?;
    let t = Instant::now();
    for _ in 0..reps {
        chain(&mut c)?;
    }
    device.synchronize()?;
    let one_by_one = t.elapsed().as_secs_f64() * 1e6 / (reps * calls) as f64;

    let mut graph = Graph::capture(&stream, |s| {
        add::launch_into(s, &mut c[0], &a, &b)?.wait()?;
        for k in 1..calls {
            let (done, rest) = c.split_at_mut(k);
            add::launch_into(s, &mut rest[0], &done[k - 1], &b)?.wait()?;
        }
        Ok(())
    })?;
    for _ in 0..100 {
        graph.launch()?;
    }
    graph.wait()?;
    let t = Instant::now();
    for _ in 0..reps {
        graph.launch()?;
    }
    graph.wait()?;
    let replayed = t.elapsed().as_secs_f64() * 1e6 / (reps * calls) as f64;
    // Waited for after each replay.
    let t = Instant::now();
    for _ in 0..reps / 10 {
        graph.replay()?;
    }
    let waited = t.elapsed().as_secs_f64() * 1e6 / ((reps / 10).max(1) * calls) as f64;

    // The last array holds a + calls * b, whichever way it was computed last.
    let last = c[calls - 1].to_vec()?;
    let mut want = add::cpu(&ha, &hb)?;
    for _ in 1..calls {
        want = add::cpu(&want, &hb)?;
    }
    assert_eq!(last, want, "the chain's result");
    println!("{} ({n} f32, {calls} calls, {reps} replays)", device.name());
    println!("one by one:        {one_by_one:.3} us per call");
    println!("graph, queued:     {replayed:.3} us per call");
    println!("graph, each waited: {waited:.3} us per call");
    println!(
        "{{\"n\": {n}, \"calls\": {calls}, \"reps\": {reps}, \"one_by_one_us\": {one_by_one:.4}, \"graph_us\": {replayed:.4}, \"graph_waited_us\": {waited:.4}}}"
    );
    Ok(())
}
