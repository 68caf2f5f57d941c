//! GPU tests: every vectorized function compared with its `::scalar` on the GPU, over
//! 0, 1, 3, 1000 and 2^20 + 7 elements. They need a CUDA GPU; CI compiles them and
//! reports them as ignored (run them with `--include-ignored` on a GPU host).

mod common;

use common::{SameAs, Special, assert_same, inputs};
use gpu_runtime::{Error, vectorize};

const SIZES: [usize; 5] = [0, 1, 3, 1000, (1 << 20) + 7];

#[vectorize(target = "cuda")]
fn add_gpu(a: f32, b: f32) -> f32 {
    a + b
}

#[vectorize(target = "cuda")]
fn saxpy(a: f32, x: f32, y: f32) -> f32 {
    a * x + y
}

#[vectorize(target = "cuda")]
fn poly(x: f64) -> f64 {
    let x2 = x * x;
    1.5 * x2 - 2.0 * x + 0.25
}

#[vectorize(target = "cuda")]
fn neg_ratio(a: f64, b: f64) -> f64 {
    -(a / b)
}

#[vectorize(target = "cuda")]
fn scale_to_f32(x: f64, n: i32) -> f32 {
    (x * n as f64) as f32
}

#[vectorize(target = "cuda")]
fn wrapping_i32(a: i32, b: i32) -> i32 {
    a * b + 7 - a
}

#[vectorize(target = "cuda")]
fn quotient_i64(a: i64, b: i64) -> i64 {
    a / b - a
}

#[vectorize(target = "cuda")]
fn mean_u32(a: u32, b: u32) -> u32 {
    (a + b) * 3 / 2
}

#[vectorize(target = "cuda")]
fn square_diff_u64(a: u64, b: u64) -> u64 {
    let t = a - b;
    t * t + 1
}

#[vectorize(target = "cuda")]
fn abs_twice(x: f32) -> f32 {
    if x < 0.0 {
        return -x * 2.0;
    }
    x * 2.0
}

#[vectorize(target = "cuda")]
fn lerp(a: f32, b: f32, t: f32) -> f32 {
    a + (b - a) * t
}

#[vectorize(target = "cuda")]
fn fahrenheit_to_celsius(f: f64) -> f64 {
    (f - 32.0) * 5.0 / 9.0
}

#[vectorize(target = "cuda")]
fn sum_of_squares(n: u32) -> u32 {
    let mut s = 0;
    for i in 0..n % 50 {
        s += i * i;
    }
    s
}

#[vectorize(target = "cuda")]
fn is_positive(x: f32) -> bool {
    x > 0.0
}

#[vectorize(target = "cuda")]
fn mix_u8(a: u8, b: u8) -> u8 {
    (a ^ b) + 3
}

#[vectorize(target = "cuda")]
fn divide_i32(a: i32, b: i32) -> i32 {
    a / b
}

#[vectorize(target = "cuda")]
fn remainder_f32(a: f32, b: f32) -> f32 {
    a % b
}

#[vectorize(target = "cuda")]
fn remainder_f64(a: f64, b: f64) -> f64 {
    a % b
}

fn check1<A: Special, R: SameAs>(name: &str, gpu: impl Fn(&[A]) -> gpu_runtime::Result<Vec<R>>, cpu: impl Fn(A) -> R) {
    for (k, &n) in SIZES.iter().enumerate() {
        let a: Vec<A> = inputs(n, 11 + k as u64);
        let want: Vec<R> = a.iter().map(|&x| cpu(x)).collect();
        let got = gpu(&a).unwrap_or_else(|e| panic!("{name} on {n} elements: {e}"));
        assert_same(&format!("{name} on {n} elements"), &got, &want);
    }
}

fn check2<A: Special, B: Special, R: SameAs>(
    name: &str,
    gpu: impl Fn(&[A], &[B]) -> gpu_runtime::Result<Vec<R>>,
    cpu: impl Fn(A, B) -> R,
) {
    for (k, &n) in SIZES.iter().enumerate() {
        let a: Vec<A> = inputs(n, 21 + k as u64);
        let mut b: Vec<B> = inputs(n, 31 + k as u64);
        b.rotate_left(n / 3); // pair the specials with other values too
        let want: Vec<R> = a.iter().zip(&b).map(|(&x, &y)| cpu(x, y)).collect();
        let got = gpu(&a, &b).unwrap_or_else(|e| panic!("{name} on {n} elements: {e}"));
        assert_same(&format!("{name} on {n} elements"), &got, &want);
    }
}

fn check3<R: SameAs>(
    name: &str,
    gpu: impl Fn(&[f32], &[f32], &[f32]) -> gpu_runtime::Result<Vec<R>>,
    cpu: impl Fn(f32, f32, f32) -> R,
) {
    for (k, &n) in SIZES.iter().enumerate() {
        let a: Vec<f32> = inputs(n, 41 + k as u64);
        let b: Vec<f32> = inputs(n, 51 + k as u64).into_iter().rev().collect();
        let mut c: Vec<f32> = inputs(n, 61 + k as u64);
        c.rotate_left(n / 2);
        let want: Vec<R> = (0..n).map(|i| cpu(a[i], b[i], c[i])).collect();
        let got = gpu(&a, &b, &c).unwrap_or_else(|e| panic!("{name} on {n} elements: {e}"));
        assert_same(&format!("{name} on {n} elements"), &got, &want);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn float_functions_match_the_cpu_bit_for_bit() {
    check2("add_gpu", |a, b| add_gpu(a, b), add_gpu::scalar);
    check3("saxpy", |a, x, y| saxpy(a, x, y), saxpy::scalar);
    check1("poly", |x| poly(x), poly::scalar);
    check2("neg_ratio", |a, b| neg_ratio(a, b), neg_ratio::scalar);
    check2("scale_to_f32", |x, n| scale_to_f32(x, n), scale_to_f32::scalar);
    check1("abs_twice", |x| abs_twice(x), abs_twice::scalar);
    check3("lerp", |a, b, t| lerp(a, b, t), lerp::scalar);
    check1("fahrenheit_to_celsius", |f| fahrenheit_to_celsius(f), fahrenheit_to_celsius::scalar);
    check1("is_positive", |x| is_positive(x), is_positive::scalar);
    // Rust's `%` is exact (fmod); the GPU uses libdevice's exact fmod too.
    check2("remainder_f32", |a, b| remainder_f32(a, b), remainder_f32::scalar);
    check2("remainder_f64", |a, b| remainder_f64(a, b), remainder_f64::scalar);
}

/// The GPU's answer and the CPU's (`name::cpu`) on the same inputs: the same values, or
/// the same fault at the same element with the same message.
fn answers<A: Special, B: Special, R: SameAs + std::fmt::Debug>(
    name: &str,
    gpu: impl Fn(&[A], &[B]) -> gpu_runtime::Result<Vec<R>>,
    cpu: impl Fn(&[A], &[B]) -> gpu_runtime::Result<Vec<R>>,
) {
    for (k, &n) in SIZES.iter().enumerate() {
        let a: Vec<A> = inputs(n, 21 + k as u64);
        let mut b: Vec<B> = inputs(n, 31 + k as u64);
        b.rotate_left(n / 3); // pair the specials with other values too
        let what = format!("{name} on {n} elements");
        match (gpu(&a, &b), cpu(&a, &b)) {
            (Ok(got), Ok(want)) => assert_same(&what, &got, &want),
            (Err(Error::KernelFault { index, message, .. }), Err(Error::KernelFault { index: i, message: m, .. })) => {
                assert_eq!((index, message), (i, m), "{what}")
            }
            (got, want) => panic!("{what}: GPU {got:?}, CPU {want:?}"),
        }
    }
}

/// Integers wrap in a release build and fault where the CPU panics in a build with
/// overflow checks: either way, the GPU answers as the CPU does.
#[test]
#[ignore = "needs a CUDA GPU"]
fn integer_functions_answer_as_the_cpu_in_either_build() {
    answers("wrapping_i32", |a, b| wrapping_i32(a, b), |a, b| wrapping_i32::cpu(a, b));
    answers("mean_u32", |a, b| mean_u32(a, b), |a, b| mean_u32::cpu(a, b));
    answers("square_diff_u64", |a, b| square_diff_u64(a, b), |a, b| square_diff_u64::cpu(a, b));
    answers("mix_u8", |a, b| mix_u8(a, b), |a, b| mix_u8::cpu(a, b));
    answers("sum_of_squares", |n: &[u32], _: &[u32]| sum_of_squares(n), |n, _| sum_of_squares::cpu(n));
    // Divisors without 0 (and without -1, which overflows with i64::MIN).
    let safe = |b: &[i64]| -> Vec<i64> { b.iter().map(|&d| if d == 0 || d == -1 { 3 } else { d }).collect() };
    answers("quotient_i64", |a: &[i64], b: &[i64]| quotient_i64(a, &safe(b)), |a, b| quotient_i64::cpu(a, &safe(b)));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn scalars_broadcast_without_a_copy() {
    let x: Vec<f32> = inputs(1000, 5);
    let y: Vec<f32> = inputs(1000, 6);
    let want: Vec<f32> = x.iter().map(|&v| add_gpu::scalar(v, 2.5)).collect();
    assert_same("add_gpu(&x, 2.5)", &add_gpu(&x, 2.5).unwrap(), &want);
    let want: Vec<f32> = x.iter().map(|&v| add_gpu::scalar(-1.0, v)).collect();
    assert_same("add_gpu(-1.0, &x)", &add_gpu(-1.0, &x).unwrap(), &want);
    let want: Vec<f32> = (0..1000).map(|i| saxpy::scalar(3.0, x[i], y[i])).collect();
    assert_same("saxpy(3.0, &x, &y)", &saxpy(3.0, &x, &y).unwrap(), &want);
    let want: Vec<f32> = (0..1000).map(|i| saxpy::scalar(x[i], 0.5, y[i])).collect();
    assert_same("saxpy(&x, 0.5, &y)", &saxpy(&x, 0.5, &y).unwrap(), &want);
    // Only scalars: one element.
    assert_eq!(add_gpu(1.0, 2.0).unwrap(), vec![3.0]);
    assert_eq!(scale_to_f32(0.5, 6).unwrap(), vec![3.0]);
    // The CPU path agrees.
    assert_same("cpu", &saxpy::cpu(3.0, &x, &y).unwrap(), &saxpy(3.0, &x, &y).unwrap());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn seed_example_prints_the_sum() {
    let a = [1.0f32, 2.0, 3.0];
    let b = [4.0f32, 5.0, 6.0];
    assert_eq!(add_gpu(&a, &b).unwrap(), vec![5.0, 7.0, 9.0]);
    let v = vec![1.0f32, 2.0, 3.0];
    assert_eq!(add_gpu(&v, &b[..]).unwrap(), vec![5.0, 7.0, 9.0]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn integer_division_by_zero_is_an_error() {
    let a: Vec<i32> = (0..100_000).collect();
    let mut b = vec![7i32; 100_000];
    assert_eq!(divide_i32(&a, &b).unwrap()[99_999], 99_999 / 7);
    b[54_321] = 0;
    b[99_000] = 0; // a later element fails too: the first one is reported
    match divide_i32(&a, &b) {
        Err(Error::KernelFault { function, index, message }) => {
            assert_eq!(function, "divide_i32");
            assert_eq!(index, 54_321);
            assert_eq!(message, "attempt to divide by zero");
        }
        other => panic!("expected a fault, got {other:?}"),
    }
    match divide_i32(i32::MIN, -1) {
        Err(Error::KernelFault { message, .. }) => assert_eq!(message, "attempt to divide with overflow"),
        other => panic!("expected a fault, got {other:?}"),
    }
    // The next call is unaffected.
    assert_eq!(divide_i32(&[9, 8], 2).unwrap(), vec![4, 4]);
}

/// Calls that read their fault words back on several threads at once each see their own:
/// the page-locked buffers they come back through are one per call in flight.
#[test]
#[ignore = "needs a CUDA GPU"]
fn concurrent_calls_read_back_their_own_fault_words() {
    std::thread::scope(|s| {
        for t in 0..8usize {
            s.spawn(move || {
                let a: Vec<i32> = (0..4096).collect();
                let da = gpu_runtime::DeviceVec::from_slice(&a).unwrap();
                let mut out = gpu_runtime::DeviceVec::<i32>::zeros(4096).unwrap();
                for round in 0..40usize {
                    let mut b = vec![3i32; 4096];
                    let bad = (t * 997 + round * 131) % 4096;
                    let faults = (t + round) % 3 != 0;
                    if faults {
                        b[bad] = 0;
                    }
                    let r =
                        if round % 2 == 0 { divide_i32(&a, &b).map(drop) } else { divide_i32::into(&mut out, &da, &b) };
                    match (faults, r) {
                        (true, Err(Error::KernelFault { index, message, .. })) => {
                            assert_eq!(
                                (index, message.as_str()),
                                (bad as u64, "attempt to divide by zero"),
                                "{t} {round}"
                            )
                        }
                        (false, Ok(())) => {}
                        (f, other) => panic!("thread {t}, round {round}: faults {f}, got {other:?}"),
                    }
                }
                assert_eq!(out.to_vec().unwrap()[3000], 1000);
            });
        }
    });
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn device_is_found_and_used() {
    assert!(gpu_runtime::is_available());
    let d = gpu_runtime::default_device().unwrap();
    assert_eq!(d.ordinal(), 0);
    assert!(d.sm_count() > 0);
    assert!(d.compute_capability() >= (7, 0));
    let d0 = gpu_runtime::Device::cuda(0).unwrap();
    assert_eq!(add_gpu::on(&d0, &[1.0f32], &[2.0f32]).unwrap(), vec![3.0]);
    let count = gpu_runtime::device_count().unwrap();
    match gpu_runtime::Device::cuda(count) {
        Err(Error::DeviceNotFound { ordinal, count: c }) => assert_eq!((ordinal, c), (count, count)),
        other => panic!("expected DeviceNotFound, got {other:?}"),
    }
}

/// With every device hidden, a call is an error, not a panic. Runs itself again in a
/// child process with `CUDA_VISIBLE_DEVICES` empty.
#[test]
#[ignore = "needs a CUDA GPU"]
fn hidden_devices_give_an_error() {
    if std::env::var_os("GPU_TEST_HIDDEN_CHILD").is_some() {
        let r = add_gpu(&[1.0f32], &[2.0f32]);
        assert!(matches!(r, Err(Error::NoDevice)), "{r:?}");
        assert!(!gpu_runtime::is_available());
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["hidden_devices_give_an_error", "--exact", "--include-ignored", "--test-threads=1"])
        .env("CUDA_VISIBLE_DEVICES", "")
        .env("GPU_TEST_HIDDEN_CHILD", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "child failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[vectorize(target = "cuda")]
fn bounded(x: i32, lo: i32, hi: i32) -> i32 {
    x.clamp(lo, hi)
}

/// A fault is the same `Err` on the GPU as on the CPU: the first failing element and Rust's
/// message with its values, on every GPU path.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_fault_has_the_cpu_message_on_every_gpu_path() {
    let x: Vec<i32> = (0..100_000).collect();
    let lo = vec![0i32; 100_000];
    let mut hi = vec![10i32; 100_000];
    hi[77_777] = -5;
    let fault = |r: gpu_runtime::Result<()>| match r {
        Err(Error::KernelFault { index, message, .. }) => (index, message),
        other => panic!("expected a fault, got {other:?}"),
    };
    let cpu = fault(bounded::cpu(&x, &lo, &hi).map(drop));
    assert_eq!(cpu, (77_777, "min > max. min = 0, max = -5".to_string()));
    assert_eq!(fault(bounded(&x, &lo, &hi).map(drop)), cpu);
    assert_eq!(fault(bounded::parallel(&x, &lo, &hi).map(drop)), cpu);
    let d = gpu_runtime::DeviceVec::from_slice(&hi).unwrap();
    assert_eq!(fault(bounded::device(&x, &lo, &d).map(drop)), cpu);
    let mut out = vec![0i32; x.len()];
    assert_eq!(fault(bounded::into(&mut out, &x, &lo, &hi)), cpu);
    let stream = gpu_runtime::default_device().unwrap().new_stream().unwrap();
    assert_eq!(fault(bounded::launch(&stream, &x, &lo, &d).unwrap().wait().map(drop)), cpu);
    let m = gpu_runtime::ndarray::Array2::from_shape_vec((1000, 100), hi.clone()).unwrap();
    let nd = fault(bounded::nd(7, 0, &m).map(drop));
    assert_eq!(nd, fault(bounded::nd_cpu(7, 0, &m).map(drop)));
    assert_eq!(nd, (77_777, "min > max. min = 0, max = -5".to_string()));
}

/// After a fault, `into`'s host output is as it was on the GPU too, as on every other
/// target: a small call (the results wait on the device until the fault word says the call
/// succeeded) and a call large enough for the chunked pipeline (chunks written before the
/// faulting one are put back). A call that succeeds writes every element.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_fault_leaves_into_host_outputs_as_they_were() {
    for n in [1000usize, 100_000, 20 << 20] {
        let a: Vec<i64> = (0..n as i64).map(|i| i * 7 - 3).collect();
        let mut b: Vec<i64> = (0..n as i64).map(|i| i % 5 + 1).collect();
        let mut out = vec![-1i64; n];
        quotient_i64::into(&mut out, &a, &b).unwrap();
        assert!(out.iter().zip(a.iter().zip(&b)).all(|(&o, (&a, &b))| o == a / b - a), "n = {n}");
        // Faults near the end: every chunk before them would have been written.
        b[n - n / 10] = 0;
        let mut out = vec![-1i64; n];
        let e = quotient_i64::into(&mut out, &a, &b).unwrap_err();
        assert!(matches!(e, Error::KernelFault { index, .. } if index == (n - n / 10) as u64), "n = {n}: {e:?}");
        assert!(out.iter().all(|&v| v == -1), "n = {n}: the output was written");
        // The plain call gives the same error.
        assert_eq!(quotient_i64(&a, &b).unwrap_err().to_string(), e.to_string());
    }
}

/// A large host call's pieces run on several threads at once, and later pieces may finish
/// first: the fault reported is still the first in index order, however many pieces after
/// it fault too, and `into`'s output is left as it was.
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_first_of_many_faults_is_reported_from_a_large_host_call() {
    let n = 24usize << 20;
    let a: Vec<i64> = (0..n as i64).collect();
    for first in [5, (1 << 20) + 3, n / 2 + 11, n - 1] {
        // A zero divisor at `first` and at every 4099th element after it.
        let b: Vec<i64> =
            (0..n).map(|i| if i >= first && (i - first) % 4099 == 0 { 0 } else { 1 + (i % 7) as i64 }).collect();
        let mut out = vec![-1i64; n];
        let e = quotient_i64::into(&mut out, &a, &b).unwrap_err();
        assert!(matches!(e, Error::KernelFault { index, .. } if index == first as u64), "first = {first}: {e:?}");
        assert!(out.iter().all(|&v| v == -1), "first = {first}: the output was written");
        assert_eq!(quotient_i64(&a, &b).unwrap_err().to_string(), e.to_string(), "first = {first}");
    }
}
