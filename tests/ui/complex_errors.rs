use gpu_runtime::{Complex, Complex32, gpu, kernel, vectorize};

// num-complex's Gaussian remainder is not in the kernel language.
#[vectorize]
fn rem(a: Complex32, b: Complex32) -> Complex32 {
    a % b
}

// Complex numbers are not ordered.
#[vectorize]
fn less(a: Complex32, b: Complex32) -> bool {
    a < b
}

// No `as` to or from a complex number.
#[vectorize]
fn cast(a: Complex32) -> f32 {
    a as f32
}

// The parts are f32 or f64.
#[vectorize]
fn int_parts(a: Complex<i32>) -> i32 {
    a.re
}

// An integer does not mix with a complex number (num-complex has no such operator).
#[vectorize]
fn mixed(a: Complex32) -> Complex32 {
    a * 2
}

// A method needs the parts' type known where it is called.
#[vectorize]
fn ambiguous(x: f64) -> f64 {
    let z = Complex::new(1.0, 2.0);
    z.norm() + x
}

// Not a method of num-complex's that the kernel language has.
#[vectorize]
fn unknown(a: Complex32) -> Complex32 {
    a.mul_add(a, a)
}

// An element's part is not a place.
#[kernel]
fn parts(a: &mut [Complex32]) {
    let i = gpu::grid1();
    a[i].re = 1.0;
}

// Warp shuffles take the parts, one at a time.
#[kernel]
fn shuffle(a: &mut [Complex32]) {
    let i = gpu::grid1();
    let z = gpu::shfl_sync(u32::MAX, a[i], 0);
    a[i] = z;
}

fn main() {}
