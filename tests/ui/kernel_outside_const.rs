use gpu_runtime::{gpu, kernel};

// Two definitions under different `cfg`s: the macro cannot tell which one rustc compiles.
#[cfg(target_pointer_width = "64")]
const TPB: usize = 16;
#[cfg(not(target_pointer_width = "64"))]
const TPB: usize = 32;

#[kernel]
fn tile(x: &mut [f32]) {
    let t = gpu::shared::<f32, 16>();
    let i = gpu::thread_idx().x as usize % TPB;
    t[i] = x[i];
    x[i] = t[i];
}

fn main() {}
