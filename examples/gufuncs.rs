//! Generalized functions (`#[guvectorize]`, Numba's `@guvectorize`): row-wise softmax and
//! standardisation, a moving average, a batch of small matrix products and an argmax per
//! row, each one function over its core, called on whole arrays. They run on
//! `Device::best()` (the GPU, else the CPU) and are checked against the CPU.

use gpu_runtime::ndarray::{Array, ArrayD, IxDyn};
use gpu_runtime::{Device, DeviceArray, Mat, MatMut, guvectorize};

#[guvectorize("(n)->(n)")]
pub fn softmax(x: &[f32], out: &mut [f32]) {
    let mut m = f32::NEG_INFINITY;
    for i in 0..x.len() {
        m = m.max(x[i]);
    }
    let mut s = 0.0;
    for i in 0..x.len() {
        out[i] = (x[i] - m).exp();
        s += out[i];
    }
    for i in 0..out.len() {
        out[i] /= s;
    }
}

/// Mean 0 and standard deviation 1 per row.
#[guvectorize("(n)->(n)")]
pub fn standardize(x: &[f64], out: &mut [f64]) {
    let n = x.len() as f64;
    let mut mean = 0.0;
    for i in 0..x.len() {
        mean += x[i];
    }
    mean /= n;
    let mut var = 0.0;
    for i in 0..x.len() {
        var += (x[i] - mean) * (x[i] - mean);
    }
    let sd = (var / n).sqrt();
    for i in 0..x.len() {
        out[i] = (x[i] - mean) / sd;
    }
}

/// The mean of the last `w` values (fewer at the start).
#[guvectorize("(n),()->(n)")]
pub fn moving_average(x: &[f32], w: usize, out: &mut [f32]) {
    let mut s = 0.0;
    for i in 0..x.len() {
        s += x[i];
        if i >= w {
            s -= x[i - w];
        }
        out[i] = s / (i + 1).min(w) as f32;
    }
}

#[guvectorize("(m,n),(n,p)->(m,p)")]
pub fn matmul(a: Mat<f32>, b: Mat<f32>, mut c: MatMut<f32>) {
    let (m, n) = a.shape();
    let p = b.shape().1;
    for i in 0..m {
        for j in 0..p {
            let mut s = 0.0;
            for k in 0..n {
                s += a[(i, k)] * b[(k, j)];
            }
            c[(i, j)] = s;
        }
    }
}

#[guvectorize("(n)->()")]
pub fn argmax(x: &[f32]) -> u32 {
    let mut best = 0;
    for i in 1..x.len() {
        if x[i] > x[best] {
            best = i;
        }
    }
    best as u32
}

#[guvectorize("(n),(n)->()")]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut s = 0.0;
    for i in 0..a.len() {
        s += a[i] * b[i];
    }
    s
}

/// The best of 10 runs of `f` after a warm-up, in ms.
fn best_of(f: &mut dyn FnMut() -> gpu_runtime::Result<()>) -> gpu_runtime::Result<f64> {
    f()?;
    let mut best = f64::INFINITY;
    for _ in 0..10 {
        let t = std::time::Instant::now();
        f()?;
        best = best.min(t.elapsed().as_secs_f64());
    }
    Ok(best * 1e3)
}

/// `--bench`: the best of 10 calls of `dot` over 1 000 000 rows of 64, with host arrays in
/// and out and with device arrays (results left on the GPU), as `bench/gufunc_compare.py`
/// times Numba's `@guvectorize` on the same data.
fn bench() -> gpu_runtime::Result<()> {
    let (rows, n) = (1_000_000, 64);
    let a = Array::from_shape_fn(IxDyn(&[rows, n]), |ix| ((ix[0] + ix[1]) % 13) as f32);
    let b = Array::from_shape_fn(IxDyn(&[rows, n]), |ix| ((ix[0] * 3 + ix[1]) % 7) as f32);
    let check: f32 = (0..n).map(|j| a[[7, j]] * b[[7, j]]).sum();
    let host = best_of(&mut || {
        let r = dot(&a, &b)?;
        assert_eq!(r[[7]], check);
        Ok(())
    })?;
    println!("gufunc dot (1000000, 64) f32, host arrays: {host:.3} ms");
    let (da, db) = (DeviceArray::from_array(&a)?, DeviceArray::from_array(&b)?);
    let mut r = dot::device(&da, &db)?;
    let device = best_of(&mut || {
        r = dot::device(&da, &db)?;
        Ok(())
    })?;
    assert_eq!(r.to_array()?[[7]], check);
    println!("gufunc dot (1000000, 64) f32, device arrays: {device:.3} ms");
    Ok(())
}

/// `--bench-shapes`: the best of 10 calls of each function above on device arrays
/// (results left on the GPU), in ms, for choosing the launch's shape over several kinds of
/// row (`GPU_VECTORIZE_GUFUNC_BLOCKS_PER_SM`).
fn bench_shapes() -> gpu_runtime::Result<()> {
    let rows_of = |rows: usize, n: usize| {
        Array::from_shape_fn(IxDyn(&[rows, n]), |ix| ((ix[0] * 7 + ix[1] * 3) % 29) as f32 / 7.0)
    };
    let (x, y) = (DeviceArray::from_array(&rows_of(1_000_000, 64))?, DeviceArray::from_array(&rows_of(1_000_000, 64))?);
    let mut times = vec![("dot (1e6, 64)", best_of(&mut || dot::device(&x, &y).map(drop))?)];
    times.push(("softmax (1e6, 64)", best_of(&mut || softmax::device(&x).map(drop))?));
    times.push(("argmax (1e6, 64)", best_of(&mut || argmax::device(&x).map(drop))?));
    times.push(("moving_average w=8 (1e6, 64)", best_of(&mut || moving_average::device(&x, 8usize).map(drop))?));
    let long = DeviceArray::from_array(&rows_of(16_000, 4096))?;
    times.push(("dot (16e3, 4096)", best_of(&mut || dot::device(&long, &long).map(drop))?));
    let f64_rows = Array::from_shape_fn(IxDyn(&[500_000, 64]), |ix| ((ix[0] + ix[1] * 5) % 31) as f64);
    let z = DeviceArray::from_array(&f64_rows)?;
    times.push(("standardize f64 (5e5, 64)", best_of(&mut || standardize::device(&z).map(drop))?));
    let m = DeviceArray::from_array(&Array::from_shape_fn(IxDyn(&[1_000_000, 4, 4]), |ix| {
        (ix[0] % 5 + ix[1] * ix[2]) as f32
    }))?;
    times.push(("matmul 4x4 (1e6)", best_of(&mut || matmul::device(&m, &m).map(drop))?));
    for (what, ms) in times {
        println!("{what}: {ms:.3} ms");
    }
    Ok(())
}

fn max_diff(a: &ArrayD<f32>, b: &ArrayD<f32>) -> f32 {
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

fn main() -> gpu_runtime::Result<()> {
    if std::env::args().any(|a| a == "--bench") {
        return bench();
    }
    if std::env::args().any(|a| a == "--bench-shapes") {
        return bench_shapes();
    }
    let device = Device::best()?;
    println!("running on {}", device.name());
    device.make_default();

    let logits = Array::from_shape_fn(IxDyn(&[64, 1000]), |ix| ((ix[0] * 131 + ix[1] * 7) % 97) as f32 / 10.0);
    let p = softmax(&logits)?;
    println!(
        "softmax: 64 rows of 1000, row sums {:.6}…, max |device-CPU| {:.1e}",
        p.slice(gpu_runtime::ndarray::s![0, ..]).sum(),
        max_diff(&p, &softmax::cpu(&logits)?)
    );

    let data = Array::from_shape_fn(IxDyn(&[128, 500]), |ix| (ix[0] as f64 + 1.0) * (ix[1] as f64).sqrt());
    let z = standardize(&data)?;
    println!(
        "standardize: row 0 mean {:.1e}, row 0 first value {:.4}",
        z.slice(gpu_runtime::ndarray::s![0, ..]).mean().unwrap_or(0.0),
        z[[0, 0]]
    );

    let series = Array::from_shape_fn(IxDyn(&[16, 10_000]), |ix| ((ix[1] as f32) * 0.01).sin() + ix[0] as f32);
    let smooth = moving_average(&series, 50usize)?;
    println!("moving average (window 50): {:?}", smooth.slice(gpu_runtime::ndarray::s![0, 100..103]).to_vec());

    let a = Array::from_shape_fn(IxDyn(&[10_000, 4, 3]), |ix| (ix[0] % 7 + ix[1] + ix[2]) as f32);
    let b = Array::from_shape_fn(IxDyn(&[3, 2]), |ix| ix[0] as f32 - ix[1] as f32);
    let c = matmul(&a, &b)?;
    println!(
        "batched matmul: {:?} -> {:?}, max |device-CPU| {:.1e}",
        a.shape(),
        c.shape(),
        max_diff(&c, &matmul::cpu(&a, &b)?)
    );

    let best = argmax(&logits)?;
    assert_eq!(best, argmax::cpu(&logits)?);
    println!("argmax per row: {:?}…", &best.as_slice().unwrap_or(&[])[..8]);

    // The same two steps over a device array: the probabilities never leave the device.
    let on_device = DeviceArray::from_array_on(&device, &logits)?;
    let probabilities = softmax::device(&on_device)?;
    let best_on_device = argmax::device(&probabilities)?;
    assert_eq!(best_on_device.to_array()?, best);
    println!("argmax of softmax, chained on {}: the same {:?}", best_on_device.device().id(), best_on_device.shape());
    Ok(())
}
