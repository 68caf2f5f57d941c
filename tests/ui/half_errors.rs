use gpu_runtime::{bf16, f16, vectorize};

// `half`'s types are not primitive: no `as`.
#[vectorize]
fn cast(x: f16) -> f32 {
    x as f32
}

// No literal is an `f16`: write `f16::from_f32(1.0)` or `f16::ONE`.
#[vectorize]
fn literal(x: f16) -> f16 {
    x + 1.0
}

// Math functions go through `f32`: `f16::from_f32(x.to_f32().sqrt())`.
#[vectorize]
fn method(x: bf16) -> bf16 {
    x.sqrt()
}

// `From` takes what converts exactly.
#[vectorize]
fn from_wide(x: u16) -> f16 {
    f16::from(x)
}

fn main() {}
