use gpu_runtime::{gpu, kernel};

// A closure called like a function: reported at the closure, not as a missing helper.
#[kernel]
fn scale(x: &[f32], y: &mut [f32]) {
    let i = gpu::grid1();
    let twice = |v: f32| v * 2.0;
    if i < x.len() && i < y.len() {
        y[i] = twice(x[i]);
    }
}

// `launch_bounds` is checked: a block has at most 1024 threads.
#[kernel(launch_bounds(2048, 2))]
fn too_wide(y: &mut [f32]) {
    y[0] = 1.0;
}

#[kernel(launch_bounds())]
fn no_bounds(y: &mut [f32]) {
    y[0] = 1.0;
}

fn main() {}
