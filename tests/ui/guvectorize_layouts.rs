//! `#[guvectorize]` layouts that do not parse, or do not match the parameters.
use gpu_runtime::guvectorize;

#[guvectorize("(n),(n)")]
fn no_arrow(a: &[f32], b: &[f32]) -> f32 {
    a[0] + b[0]
}

#[guvectorize("(n,1)->()")]
fn bad_name(a: &[f32]) -> f32 {
    a[0]
}

#[guvectorize("(i,j,k)->()")]
fn three_dims(a: &[f32]) -> f32 {
    a[0]
}

#[guvectorize("(n),(n)->()")]
fn too_few_inputs(a: &[f32]) -> f32 {
    a[0]
}

#[guvectorize("(n)->(n)")]
fn output_returned(a: &[f32]) -> f32 {
    a[0]
}

#[guvectorize("(n)->(n)")]
fn output_not_written(a: &[f32], out: &[f32]) {
    let _ = (a, out);
}

#[guvectorize("(m,n)->()")]
fn matrix_as_slice(a: &[f32]) -> f32 {
    a[0]
}

#[guvectorize("(n)->()")]
fn not_a_view(a: Vec<f32>) -> f32 {
    a[0]
}

#[guvectorize("(n)->(),(n)")]
fn tuple_for_a_core_output(a: &[f32]) -> (f32, f32) {
    (a[0], a[1])
}

#[guvectorize("(n)->(),()")]
fn tuple_of_a_slice(a: &[f32]) -> (f32, Vec<f32>) {
    (a[0], Vec::new())
}

#[guvectorize("(n)->(),(),()")]
fn tuple_too_short(a: &[f32]) -> (f32, f32) {
    (a[0], a[1])
}

#[guvectorize("(n)->()")]
fn one_tuple(a: &[f32]) -> (f32,) {
    (a[0],)
}

fn main() {}
