//! Device arrays, `into`, `reduce`, the CPU targets and calls from many threads, on the GPU.

mod common;

use common::{SameAs, assert_same, inputs};
use gpu_runtime::{DeviceVec, Error, vectorize};

#[vectorize(target = "cuda")]
fn add(a: f32, b: f32) -> f32 {
    a + b
}

#[vectorize(target = "cuda", identity = 0.0)]
fn sum(a: f64, b: f64) -> f64 {
    a + b
}

#[vectorize(target = "cuda", identity = 1)]
fn product(a: i64, b: i64) -> i64 {
    a.wrapping_mul(b)
}

#[vectorize(target = "cuda")]
fn smallest(a: f32, b: f32) -> f32 {
    a.min(b)
}

#[vectorize(target = "cuda", identity = u32::MIN)]
fn largest(a: u32, b: u32) -> u32 {
    a.max(b)
}

#[vectorize(target = "cuda")]
fn ratio(a: i32, b: i32) -> i32 {
    a / b
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn device_vectors_round_trip() {
    let host: Vec<f32> = inputs(10_007, 1);
    let mut d = DeviceVec::from_slice(&host).unwrap();
    assert_eq!(d.len(), 10_007);
    assert!(!d.is_empty());
    assert_same("to_vec", &d.to_vec().unwrap(), &host);
    let z = DeviceVec::<u16>::zeros(77).unwrap();
    assert_eq!(z.to_vec().unwrap(), vec![0u16; 77]);
    let e = DeviceVec::<f64>::zeros(0).unwrap();
    assert!(e.is_empty() && e.to_vec().unwrap().is_empty());
    let other: Vec<f32> = inputs(10_007, 2);
    d.copy_from(&other).unwrap();
    let mut back = vec![0.0f32; 10_007];
    d.copy_to(&mut back).unwrap();
    assert_same("copy_from/copy_to", &back, &other);
    assert!(matches!(d.copy_from(&other[1..]), Err(Error::LengthMismatch { .. })));
    let v = d.slice(100..200).unwrap();
    assert_same("slice", &v.to_vec().unwrap(), &other[100..200]);
    assert!(matches!(d.slice(10_000..10_008), Err(Error::OutOfRange { start: 10_000, end: 10_008, len: 10_007 })));
    let mut part = d.slice_mut(5..10).unwrap();
    part.copy_from(&[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
    assert_same(
        "slice_mut",
        &d.slice(4..11).unwrap().to_vec().unwrap(),
        &[other[4], 1.0, 2.0, 3.0, 4.0, 5.0, other[10]],
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn device_arguments_are_used_in_place() {
    let a: Vec<f32> = inputs(1 << 20, 3);
    let b: Vec<f32> = inputs(1 << 20, 4);
    let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| add::scalar(*x, *y)).collect();
    let (da, db) = (DeviceVec::from_slice(&a).unwrap(), DeviceVec::from_slice(&b).unwrap());
    assert_same("device, device", &add(&da, &db).unwrap(), &want);
    assert_same("host, device", &add(&a, &db).unwrap(), &want);
    assert_same("device, host", &add(&da, &b).unwrap(), &want);
    let plus2: Vec<f32> = a.iter().map(|x| add::scalar(*x, 2.0)).collect();
    assert_same("device, scalar", &add(&da, 2.0).unwrap(), &plus2);
    // Results that stay on the device feed the next call.
    let sum_dev = add::device(&da, &db).unwrap();
    let twice = add::device(&sum_dev, &sum_dev).unwrap();
    let want_twice: Vec<f32> = want.iter().map(|x| add::scalar(*x, *x)).collect();
    assert_same("chained on the device", &twice.to_vec().unwrap(), &want_twice);
    // Views.
    let got = add(da.slice(10..1010).unwrap(), db.slice(20..1020).unwrap()).unwrap();
    let want_view: Vec<f32> = (0..1000).map(|i| add::scalar(a[10 + i], b[20 + i])).collect();
    assert_same("views", &got, &want_view);
    assert!(matches!(add(da.slice(0..5).unwrap(), &db), Err(Error::LengthMismatch { .. })));
    // Empty.
    let empty = DeviceVec::<f32>::zeros(0).unwrap();
    assert!(add(&empty, &empty).unwrap().is_empty());
    assert!(add::device(&empty, 1.0).unwrap().is_empty());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn into_writes_without_allocating_results() {
    let a: Vec<f32> = inputs(100_000, 5);
    let b: Vec<f32> = inputs(100_000, 6);
    let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| add::scalar(*x, *y)).collect();
    let mut host = vec![0.0f32; 100_000];
    add::into(&mut host, &a, &b).unwrap();
    assert_same("into a Vec", &host, &want);
    let mut dev = DeviceVec::<f32>::zeros(100_000).unwrap();
    add::into(&mut dev, &a, &b).unwrap();
    assert_same("into a DeviceVec", &dev.to_vec().unwrap(), &want);
    let (da, db) = (DeviceVec::from_slice(&a).unwrap(), DeviceVec::from_slice(&b).unwrap());
    let mut part = DeviceVec::<f32>::zeros(300).unwrap();
    add::into(part.slice_mut(100..200).unwrap(), da.slice(0..100).unwrap(), db.slice(0..100).unwrap()).unwrap();
    let got = part.to_vec().unwrap();
    assert_same("into a view", &got[100..200], &want[..100]);
    assert!(got[..100].iter().chain(&got[200..]).all(|v| *v == 0.0));
    // Only scalars: every element of the output gets the value.
    let mut filled = vec![0.0f32; 10];
    add::into(&mut filled, 1.0, 2.0).unwrap();
    assert_eq!(filled, vec![3.0; 10]);
    match add::into(&mut vec![0.0f32; 3], &a, &b) {
        Err(Error::LengthMismatch { lengths, .. }) => {
            assert_eq!(lengths, vec![("a", 100_000), ("b", 100_000), ("out", 3)])
        }
        other => panic!("expected a length mismatch, got {other:?}"),
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn reduce_folds_in_one_launch_and_a_small_pass() {
    // Integer-valued floats: every order of additions gives the same exact sum.
    for n in [1usize, 2, 255, 256, 257, 1000, 65_537, (1 << 24) + 3] {
        let v: Vec<f64> = (0..n).map(|i| (i % 1000) as f64 - 300.0).collect();
        let want: f64 = v.iter().sum();
        assert_eq!(sum::reduce(&v).unwrap(), want, "sum of {n}");
        let d = DeviceVec::from_slice(&v).unwrap();
        assert_eq!(sum::reduce(&d).unwrap(), want, "sum of {n} on the device");
    }
    let v: Vec<i64> = (1..=100_000).map(|i| i * 7919 % 1_000_003).collect();
    let want = v.iter().fold(1i64, |a, b| a.wrapping_mul(*b));
    assert_eq!(product::reduce(&v).unwrap(), want);
    let f: Vec<f32> = inputs(1_000_003, 9).into_iter().filter(|x: &f32| !x.is_nan()).collect();
    let want = f.iter().fold(f32::INFINITY, |a, b| a.min(*b));
    assert_eq!(smallest::reduce(&f).unwrap(), want);
    let u: Vec<u32> = inputs(500_000, 10);
    assert_eq!(largest::reduce(&u).unwrap(), *u.iter().max().unwrap());
    // Empty arrays: the identity, or an error without one.
    assert_eq!(sum::reduce(&Vec::<f64>::new()).unwrap(), 0.0);
    assert_eq!(largest::reduce(&[0u32; 0]).unwrap(), 0);
    assert!(matches!(smallest::reduce(&[0.0f32; 0]), Err(Error::EmptyReduce { function: "smallest" })));
    // A scalar is an array of one.
    assert_eq!(sum::reduce(2.5).unwrap(), 2.5);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn faults_name_the_first_failed_element() {
    let a: Vec<i32> = (0..1_000_000).collect();
    let mut b = vec![3i32; 1_000_000];
    b[700_001] = 0;
    b[900_000] = 0;
    match ratio(&a, &b) {
        Err(Error::KernelFault { index, message, .. }) => {
            assert_eq!((index, message.as_str()), (700_001, "attempt to divide by zero"))
        }
        other => panic!("expected a fault, got {other:?}"),
    }
    let mut out = DeviceVec::<i32>::zeros(1_000_000).unwrap();
    assert!(matches!(ratio::into(&mut out, &a, &b), Err(Error::KernelFault { index: 700_001, .. })));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cpu_and_parallel_targets_agree_with_the_gpu() {
    let a: Vec<f32> = inputs(200_000, 11);
    let b: Vec<f32> = inputs(200_000, 12);
    let gpu = add(&a, &b).unwrap();
    assert_same("cpu", &add::cpu(&a, &b).unwrap(), &gpu);
    assert_same("parallel", &add::parallel(&a, &b).unwrap(), &gpu);
    let da = DeviceVec::from_slice(&a).unwrap();
    assert_same("cpu on device data", &add::cpu(&da, &b).unwrap(), &gpu);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn sixteen_threads_share_the_functions() {
    std::thread::scope(|s| {
        for t in 0..16u64 {
            s.spawn(move || {
                let shared = DeviceVec::from_slice(&inputs::<f32>(50_000, 100 + t)).unwrap();
                for round in 0..50u64 {
                    let a: Vec<f32> = inputs(10_000 + (t * 977 + round * 13) as usize, t * 1000 + round);
                    let b: Vec<f32> = inputs(a.len(), t * 1000 + round + 500);
                    let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| add::scalar(*x, *y)).collect();
                    assert_same(&format!("thread {t}, round {round}"), &add(&a, &b).unwrap(), &want);
                    let got = add(shared.slice(0..a.len()).unwrap(), &b).unwrap();
                    let head = shared.slice(0..a.len()).unwrap().to_vec().unwrap();
                    let want: Vec<f32> = head.iter().zip(&b).map(|(x, y)| add::scalar(*x, *y)).collect();
                    assert_same(&format!("thread {t}, round {round}, device"), &got, &want);
                    let ints: Vec<u32> = (0..1000).map(|i| i * (t as u32 + 1)).collect();
                    assert_eq!(largest::reduce(&ints).unwrap(), 999 * (t as u32 + 1));
                }
            });
        }
    });
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn streams_run_work_while_the_host_goes_on() {
    let device = gpu_runtime::default_device().unwrap();
    let (s1, s2) = (device.new_stream().unwrap(), device.new_stream().unwrap());
    let a: Vec<f32> = inputs(4 << 20, 21);
    let b: Vec<f32> = inputs(4 << 20, 22);
    let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| add::scalar(*x, *y)).collect();
    let (da, db) = (DeviceVec::from_slice(&a).unwrap(), DeviceVec::from_slice(&b).unwrap());
    // Three calls in flight on two streams.
    let p1 = add::launch(&s1, &a, &b).unwrap();
    let p2 = add::launch_device(&s2, &da, &db).unwrap();
    let mut out = vec![0.0f32; a.len()];
    let p3 = add::launch_into(&s1, &mut out, &da, 1.0).unwrap();
    assert_same("launch", &p1.wait().unwrap(), &want);
    assert_same("launch_device", &p2.wait().unwrap().to_vec().unwrap(), &want);
    p3.wait().unwrap();
    let plus1: Vec<f32> = a.iter().map(|x| add::scalar(*x, 1.0)).collect();
    assert_same("launch_into", &out, &plus1);
    // Dropping a handle waits for its work.
    {
        let _dropped = add::launch(&s2, &a, &b).unwrap();
    }
    s2.synchronize().unwrap();
    // Faults come back through `wait`, with Rust's own message: the function run again on
    // the host at the failing element, its arguments read there from host memory, from the
    // device, or broadcast.
    let n: Vec<i32> = (0..1000).collect();
    let mut d = vec![1i32; 1000];
    d[512] = 0;
    fn divides_by_zero<T: std::fmt::Debug>(r: gpu_runtime::Result<T>) -> bool {
        matches!(&r, Err(Error::KernelFault { index: 512, message, .. }) if message == "attempt to divide by zero")
    }
    assert!(divides_by_zero(ratio::launch(&s1, &n, &d).unwrap().wait()));
    let (dn, dd) = (DeviceVec::from_slice(&n).unwrap(), DeviceVec::from_slice(&d).unwrap());
    assert!(divides_by_zero(ratio::launch_device(&s1, &dn, &dd).unwrap().wait()));
    let mut q = vec![0i32; 1000];
    assert!(divides_by_zero(ratio::launch_into(&s1, &mut q, 7, &dd).unwrap().wait()));
    assert!(divides_by_zero(ratio(&dn, &d)));
    // A call with nothing to do is ready at once.
    assert!(add::launch(&s1, &[0.0f32; 0], 1.0).unwrap().is_done());
}

/// A tuple result: one output array per field.
#[vectorize(target = "cuda")]
fn divmod(a: i32, b: i32) -> (i32, i32, bool) {
    if b == 0 { (0, 0, false) } else { (a.wrapping_div(b), a.wrapping_rem(b), true) }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn tuple_results_fill_one_array_each() {
    let a: Vec<i32> = (0..300_000).map(|i| i * 7 - 1_000_000).collect();
    let b: Vec<i32> = (0..300_000).map(|i| i % 13 - 6).collect();
    let want = divmod::cpu(&a, &b).unwrap();
    let got = divmod(&a, &b).unwrap();
    assert!(got == want, "divmod on the host vectors");
    // On the device, then into a mix of host and device outputs.
    let (q, r, ok) = divmod::device(&DeviceVec::from_slice(&a).unwrap(), &b).unwrap();
    assert!((q.to_vec().unwrap(), r.to_vec().unwrap(), ok.to_vec().unwrap()) == want, "divmod::device");
    let mut q_host = vec![0i32; a.len()];
    let mut r_dev = DeviceVec::<i32>::zeros(a.len()).unwrap();
    let mut ok_host = vec![false; a.len()];
    divmod::into((&mut q_host, &mut r_dev, &mut ok_host), &a, &b).unwrap();
    assert!((q_host.clone(), r_dev.to_vec().unwrap(), ok_host.clone()) == want, "divmod::into");
    // Streams: the results come when waited for.
    let stream = gpu_runtime::default_device().unwrap().new_stream().unwrap();
    let pending = divmod::launch(&stream, &a, 5).unwrap();
    let (q5, r5, _) = pending.wait().unwrap();
    assert_eq!((q5[10], r5[10]), (a[10] / 5, a[10] % 5));
    let mut outs = (vec![0i32; a.len()], vec![0i32; a.len()], vec![false; a.len()]);
    divmod::launch_into(&stream, (&mut outs.0, &mut outs.1, &mut outs.2), &a, &b).unwrap().wait().unwrap();
    assert!(outs == want, "divmod::launch_into");
    // An output of the wrong length is an error before any work.
    let mut short = vec![0i32; 3];
    assert!(matches!(divmod::into((&mut q_host, &mut short, &mut ok_host), &a, &b), Err(Error::LengthMismatch { .. })));
    // A tuple of one field is one output array.
    let x: Vec<f64> = inputs(10_001, 5);
    let (got,) = single(&x, 0.5).unwrap();
    assert_same("single", &got, &single::cpu(&x, 0.5).unwrap().0);
}

/// A tuple result of one field (a struct, not a scalar, to the compiler).
#[vectorize(target = "cuda")]
fn single(a: f64, b: f64) -> (f64,) {
    (a * b + 1.0,)
}

/// Large host calls and large staged copies made from the jobs of a rayon loop. The
/// pipelines and the staged copies keep their device's buffers while their own parallel
/// copies run, and a rayon thread waiting inside those takes up the loop's other jobs: a
/// job that asked for the buffers its own thread held would wait for ever. `claim`
/// (`driver/staged.rs`) no longer waits on a rayon thread; its unit test shows the hang
/// of a plain lock without a GPU, and this test has run only against `claim`.
#[test]
#[ignore = "needs a CUDA GPU"]
fn large_calls_from_a_rayon_loop_do_not_wait_for_each_other() {
    use rayon::prelude::*;
    // 12 Mi f32: 48 MiB per array, over both pipelines' thresholds and the staged copies'.
    let n = 12 << 20;
    let a: Vec<f32> = inputs(n, 41);
    let b: Vec<f32> = inputs(n, 42);
    let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| add::scalar(*x, *y)).collect();
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let outcome = (0..24usize)
            .into_par_iter()
            .map(|k| -> gpu_runtime::Result<bool> {
                if k % 3 == 0 {
                    // A staged copy to the GPU and back.
                    let back = DeviceVec::from_slice(&a)?.to_vec()?;
                    Ok(back.iter().zip(&a).all(|(x, y)| x.to_bits() == y.to_bits()))
                } else {
                    let got = add(&a, &b)?;
                    Ok(got.iter().zip(&want).all(|(g, w)| g.same_as(*w)))
                }
            })
            .collect::<gpu_runtime::Result<Vec<bool>>>();
        let _ = done.send(outcome);
    });
    let outcome = finished
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("large calls from a rayon loop's jobs waited for each other");
    let same = outcome.unwrap();
    assert!(same.iter().all(|s| *s), "results differ: {same:?}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn large_host_arrays_go_through_the_chunked_pipeline() {
    // 2^24 + 7 elements: 64 MiB per f32 array, cut into chunks over three streams.
    let n = (1 << 24) + 7;
    let a: Vec<f32> = inputs(n, 31);
    let b: Vec<f32> = inputs(n, 32);
    let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| add::scalar(*x, *y)).collect();
    assert_same("host slices", &add(&a, &b).unwrap(), &want);
    // Host and device arguments mixed, a scalar, and `into` a host slice.
    let db = DeviceVec::from_slice(&b).unwrap();
    let mut out = vec![0.0f32; n];
    add::into(&mut out, &a, &db).unwrap();
    assert_same("host + device into host", &out, &want);
    let plus: Vec<f32> = a.iter().map(|x| add::scalar(*x, 0.5)).collect();
    assert_same("host + scalar", &add(&a, 0.5).unwrap(), &plus);
    // Results left on the device from host inputs.
    assert_same("device results", &add::device(&a, &b).unwrap().to_vec().unwrap(), &want);
    // Tuple results, and a fault far into the array: its index is the global one.
    let x: Vec<i32> = (0..n as i32).collect();
    let mut y = vec![3i32; n];
    let (q, r, ok) = divmod(&x, &y).unwrap();
    assert!(q[n - 1] == (n as i32 - 1) / 3 && r[n - 1] == (n as i32 - 1) % 3 && ok.iter().all(|v| *v));
    y[12_345_678] = 0;
    y[13_000_000] = 0;
    match ratio(&x, &y) {
        Err(Error::KernelFault { index, .. }) => assert_eq!(index, 12_345_678),
        other => panic!("expected a fault, got {other:?}"),
    }
    // Many calls in a row reuse the page-locked buffers.
    for _ in 0..5 {
        assert_same("again", &add(&a, &b).unwrap(), &want);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn views_at_any_offset_take_the_unaligned_loop() {
    let a: Vec<f32> = inputs(100_003, 41);
    let b: Vec<f32> = inputs(100_003, 42);
    let (da, db) = (DeviceVec::from_slice(&a).unwrap(), DeviceVec::from_slice(&b).unwrap());
    for (s, e) in [(1, 100_003), (3, 99_000), (4, 100_000), (8, 100_003), (5, 6)] {
        let want: Vec<f32> = a[s..e].iter().zip(&b[s..e]).map(|(x, y)| add::scalar(*x, *y)).collect();
        let got = add(da.slice(s..e).unwrap(), db.slice(s..e).unwrap()).unwrap();
        assert_same(&format!("views {s}..{e}"), &got, &want);
        // One view aligned, the other not.
        let shifted: Vec<f32> = a[s..e].iter().zip(&b[..e - s]).map(|(x, y)| add::scalar(*x, *y)).collect();
        assert_same(&format!("mixed {s}..{e}"), &add(da.slice(s..e).unwrap(), &b[..e - s]).unwrap(), &shifted);
        let mut out = DeviceVec::<f32>::zeros(e - s + 1).unwrap();
        add::into(out.slice_mut(1..).unwrap(), da.slice(s..e).unwrap(), 1.0).unwrap();
        let plus: Vec<f32> = a[s..e].iter().map(|x| add::scalar(*x, 1.0)).collect();
        assert_same(&format!("into an odd view {s}..{e}"), &out.to_vec().unwrap()[1..], &plus);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn device_results_are_ordered_across_threads_and_streams() {
    // Calls whose results stay on the device return before the kernel finishes; every
    // later use from another stream must still see them.
    let n = 1 << 26;
    let a: Vec<f32> = inputs(n, 51);
    let b: Vec<f32> = inputs(n, 52);
    let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| add::scalar(*x, *y)).collect();
    let (da, db) = (DeviceVec::from_slice(&a).unwrap(), DeviceVec::from_slice(&b).unwrap());
    // Written on this thread's stream, read on another thread's.
    let mut out = DeviceVec::<f32>::zeros(n).unwrap();
    add::into(&mut out, &da, &db).unwrap();
    let read = std::thread::spawn(move || out.to_vec().unwrap()).join().unwrap();
    assert_same("read on another thread", &read, &want);
    // An input dropped on another thread while the kernel may still read it: its memory
    // is freed after the kernel, so a new array written there cannot leak into the result.
    let mut out = DeviceVec::<f32>::zeros(n).unwrap();
    let da2 = DeviceVec::from_slice(&a).unwrap();
    add::into(&mut out, &da2, &db).unwrap();
    std::thread::spawn(move || {
        drop(da2);
        let _overwrite = DeviceVec::from_slice(&vec![f32::NAN; n]).unwrap();
    })
    .join()
    .unwrap();
    assert_same("input dropped on another thread", &out.to_vec().unwrap(), &want);
    // A chain of queued calls on one thread, then a user stream reading the last result.
    let mut x = add::device(&da, 0.0f32).unwrap();
    for _ in 0..10 {
        x = add::device(&x, 1.0f32).unwrap();
    }
    let stream = gpu_runtime::default_device().unwrap().new_stream().unwrap();
    let y = add::launch_device(&stream, &x, &db).unwrap().wait().unwrap();
    let expect: Vec<f32> = a
        .iter()
        .zip(&b)
        .map(|(v, w)| {
            let mut t = add::scalar(*v, 0.0);
            for _ in 0..10 {
                t = add::scalar(t, 1.0);
            }
            add::scalar(t, *w)
        })
        .collect();
    assert_same("chain then another stream", &y.to_vec().unwrap(), &expect);
    // Sixteen threads writing into their own outputs from shared inputs.
    std::thread::scope(|s| {
        for t in 0..16 {
            let (da, db, want) = (&da, &db, &want);
            s.spawn(move || {
                let mut out = DeviceVec::<f32>::zeros(n / 16).unwrap();
                let range = t * (n / 16)..(t + 1) * (n / 16);
                add::into(&mut out, da.slice(range.clone()).unwrap(), db.slice(range.clone()).unwrap()).unwrap();
                assert_same("per-thread slices", &out.to_vec().unwrap(), &want[range]);
            });
        }
    });
}

/// Copies of 8 MiB or more go through page-locked buffers in pieces: lengths that are not
/// a whole number of pieces, a range in the middle of a vector, and the results of work
/// queued on another stream all come out exact.
#[test]
#[ignore = "needs a CUDA GPU"]
fn large_copies_are_staged_and_exact() {
    let n = (40 << 20) / 4 + 12_345; // 40 MiB and a bit of f32: two and a half pieces
    let data: Vec<f32> = (0..n).map(|i| (i % 100_003) as f32 * 0.5).collect();
    let mut v = DeviceVec::from_slice(&data).unwrap();
    assert_eq!(v.to_vec().unwrap(), data);
    let mut back = vec![0.0f32; n];
    v.copy_to(&mut back).unwrap();
    assert_eq!(back, data);
    // A range inside the vector, written and read as itself.
    let middle: Vec<f32> = (0..n / 2).map(|i| -(i as f32)).collect();
    v.slice_mut(1000..1000 + n / 2).unwrap().copy_from(&middle).unwrap();
    let whole = v.to_vec().unwrap();
    assert_eq!(&whole[..1000], &data[..1000]);
    assert_eq!(&whole[1000..1000 + n / 2], &middle[..]);
    assert_eq!(&whole[1000 + n / 2..], &data[1000 + n / 2..]);
    // Results computed on a stream of their own, read back through the staging.
    let device = gpu_runtime::default_device().unwrap();
    let stream = device.new_stream().unwrap();
    let x = DeviceVec::from_slice(&data).unwrap();
    let mut y = DeviceVec::<f32>::zeros(n).unwrap();
    add::launch_into(&stream, &mut y, &x, 1.0f32).unwrap().wait().unwrap();
    let pending = add::launch_device(&stream, &x, &x).unwrap();
    let doubled = pending.wait().unwrap();
    assert!(doubled.to_vec().unwrap().iter().zip(&data).all(|(d, x)| *d == x + x));
    assert!(y.to_vec().unwrap().iter().zip(&data).all(|(d, x)| *d == x + 1.0));
}

/// The reduction folds whole 16-byte vectors where the input is aligned and the rest one
/// element at a time: views at every offset (aligned or not), lengths with every tail, and
/// 4- and 8-byte elements all give the exact result; a fold that faults is an error.
#[test]
#[ignore = "needs a CUDA GPU"]
fn reduce_at_every_offset_and_tail() {
    let v: Vec<f64> = (0..3_000_011).map(|i| (i % 977) as f64 - 400.0).collect();
    let d = DeviceVec::from_slice(&v).unwrap();
    let f: Vec<f32> = v.iter().map(|x| *x as f32).collect();
    let df = DeviceVec::from_slice(&f).unwrap();
    let u: Vec<u32> = (0..3_000_011u32).map(|i| i.wrapping_mul(2_654_435_761) >> 3).collect();
    let du = DeviceVec::from_slice(&u).unwrap();
    for start in 0..5 {
        for len in [1usize, 3, 4, 5, 7, 8, 9, 1023, 1024, 1025, 1_000_003, 3_000_000] {
            let end = start + len;
            let want: f64 = v[start..end].iter().sum();
            assert_eq!(sum::reduce(d.slice(start..end).unwrap()).unwrap(), want, "f64 {start}..{end}");
            assert_eq!(sum::reduce(&v[start..end]).unwrap(), want, "f64 host {start}..{end}");
            let want = f[start..end].iter().fold(f32::INFINITY, |a, b| a.min(*b));
            assert_eq!(smallest::reduce(df.slice(start..end).unwrap()).unwrap(), want, "f32 {start}..{end}");
            let want = *u[start..end].iter().max().unwrap();
            assert_eq!(largest::reduce(du.slice(start..end).unwrap()).unwrap(), want, "u32 {start}..{end}");
        }
    }
    // A fold that fails anywhere, in the vectors or the tail, is an error: `guarded`
    // fails on a 7, and every partial sum other than the 7 itself is a multiple of 1000
    // plus at most 7, so the 7 is folded with something, and fails, wherever it lands.
    for at in [0usize, 5, 4_000, 999_999, 1_000_001] {
        let mut x = vec![1000i64; 1_000_002];
        x[at] = 7;
        let r = guarded::reduce(&x);
        assert!(
            matches!(&r, Err(Error::KernelFault { function: "guarded", message, .. }) if message == "attempt to divide by zero"),
            "7 at {at}: {r:?}"
        );
    }
    assert_eq!(guarded::reduce(&vec![1000i64; 1_000_002]).unwrap(), 1_000_002_000);
}

/// A sum that fails (Rust's division by zero) when either operand is 7.
#[vectorize(target = "cuda")]
fn guarded(a: i64, b: i64) -> i64 {
    // The quotients are -1, 0 or 1: never `i64::MAX`, so the result is the sum.
    if 1 / (a - 7) + 1 / (b - 7) == i64::MAX { 0 } else { a + b }
}
