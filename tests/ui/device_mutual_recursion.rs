use gpu_runtime::device;

#[device]
fn is_even(n: u32) -> bool {
    if n == 0 { true } else { is_odd(n - 1) }
}

#[device]
fn is_odd(n: u32) -> bool {
    if n == 0 { false } else { is_even(n - 1) }
}

fn main() {}
