// The hand-written functions of the corpus, shared by the compiler's tests (which compile
// them from source text and natively, as the reference) and the GPU tests (which compile
// them with `#[vectorize]`): each includer defines `corpus!`.
corpus! {
    fn add_f32(a: f32, b: f32) -> f32 { a + b }
    fn saxpy(a: f32, x: f32, y: f32) -> f32 { a * x + y }
    fn poly_f64(x: f64) -> f64 { let x2 = x * x; 1.5 * x2 - 2.0 * x + 0.25 }
    fn neg_ratio(a: f64, b: f64) -> f64 { -(a / b) }
    fn rem_f32(a: f32, b: f32) -> f32 { a % b }
    fn rem_f64(a: f64, b: f64) -> f64 { a % b }
    fn mixed_types(x: f64, n: i32) -> f32 { (x * n as f64) as f32 }
    fn wrap_i32(a: i32, b: i32) -> i32 { a * b + 7 - a }
    fn div_i64(a: i64, b: i64) -> i64 { a / b - a % b }
    fn div_u16(a: u16, b: u16) -> u16 { a / b + a % b }
    fn div_i8(a: i8, b: i8) -> i8 { a / b }
    fn mean_u32(a: u32, b: u32) -> u32 { (a + b) * 3 / 2 }
    fn sq_u64(a: u64, b: u64) -> u64 { let t = a - b; t * t + 1 }
    fn shifts(a: u32, b: i64) -> u32 { (a << b) ^ (a >> (b + 3)) }
    fn ashr_i16(a: i16, b: u8) -> i16 { a >> b }
    fn bits_u8(a: u8, b: u8) -> u8 { !(a & b) | (a ^ 0x5a) }
    fn bools(a: bool, b: bool) -> bool { (a && !b) || (a ^ b) & a | b }
    fn cmp_f32(a: f32, b: f32) -> bool { a < b || a == b && a != 0.0 }
    fn cmp_mixed(a: i32, b: u32) -> i32 { (a >= 0) as i32 + (b <= 5) as i32 * 2 + (a > -3 && b > 1) as i32 * 4 }
    fn casts_f2i(x: f32) -> i64 { x as i8 as i64 + x as u16 as i64 + x as i64 + (x as u64 / 3) as i64 }
    fn casts_i2f(a: i64, b: u64) -> f64 { a as f64 + b as f64 + a as f32 as f64 }
    fn casts_int(a: i64) -> u8 { (a as i8 as u32 as u16 as i16 as u64 >> 3) as u8 }
    fn casts_float(a: f64) -> f64 { (a as f32) as f64 - a }
    fn usize_isize(a: usize, b: isize) -> isize { a as isize - b }
    fn abs_branch(x: f32) -> f32 { if x < 0.0 { return -x; } x }
    fn if_chain(x: i32) -> i32 { if x < -10 { -1 } else if x < 10 { 0 } else if x < 100 { 1 } else { 2 } }
    fn while_collatz(n: u32) -> u32 { let mut x = n % 1000 + 1; let mut steps = 0; while x != 1 { if x % 2 == 0 { x /= 2; } else { x = 3 * x + 1; } steps += 1; } steps }
    fn loop_break(n: u32) -> u32 { let n = n % 100000; let mut i = 0u32; loop { i += 1; if i * i > n { break i; } } }
    fn for_sum(n: u32) -> u32 { let mut s = 0; for i in 0..n % 64 { s += i * i; } s }
    fn for_incl_rev(n: i8) -> i32 { let mut s = 0i32; for i in (n..=100).rev() { s = s * 3 + i as i32; } s }
    fn for_step(n: u64, k: usize) -> u64 { let mut s = 0; for i in (0..n % 1000).step_by(k) { s += i; } s }
    fn for_labels(n: u8) -> u32 { let mut s = 0u32; 'outer: for i in 0..n { for j in 0..=i { if j == 7 { continue 'outer; } if i > 200 { break 'outer; } s += j as u32; } } s }
    fn full_range(x: u8) -> u32 { let mut c = 0u32; for i in 0..=255u8 { if i <= x { c += 1; } } c }
    fn shadowing(x: i32) -> f32 { let x = x * 2; let x = x as f32 + 0.5; x }
    fn block_value(x: f64) -> f64 { let y = { let t = x * 2.0; t + 1.0 }; y * y }
    fn compound(a0: i32, b: i32) -> i32 { let mut a = a0; a += b; a -= 1; a *= 3; a <<= 2; a >>= 1; a |= 5; a &= 0xff; a ^= b; a }
    fn neg_min(a: i32) -> i32 { -a }
    fn bool_out(x: f64, y: f64) -> bool { x * x + y * y <= 1.0 }
    fn bool_in(b: bool, x: f32) -> f32 { if b { x } else { -x } }
    fn lit_suffixes(x: f64) -> f64 { x + 1e3 + 2.5e-3_f64 + 0x10 as f64 + 0b101 as f64 + 1_000u32 as f64 }
    fn no_args() -> f32 { 42.0 }
    fn six_args(a: f32, b: f64, c: i32, d: u8, e: bool, f: i64) -> f64 { a as f64 + b + c as f64 + d as f64 + e as u8 as f64 + f as f64 }
    fn consts(x: f64) -> f64 { x * std::f64::consts::PI + f64::EPSILON - core::f64::consts::LN_2 + f32::MAX as f64 + i32::MIN as f64 + u8::BITS as f64 }
    fn float_limits(x: f32) -> bool { x == f32::INFINITY || x == f32::NEG_INFINITY || x < f32::MIN_POSITIVE || x > std::f32::MAX }
    fn method_paths(a: f32, b: f32) -> f32 { f32::max(a, b) + f32::sqrt(a.abs()) + std::primitive::f32::min(a, 2.0) }
    fn chained_methods(x: f32) -> f32 { x.abs().sqrt().mul_add(2.0, 1.0).clamp(-10.0, 10.0).powi(3) }
    fn int_chain(x: u32, k: u32) -> u32 { x.rotate_left(k).count_ones() + x.wrapping_mul(k).leading_zeros() + x.pow(3).saturating_add(k) }
    fn match_int(x: i32) -> i32 { match x { 0 => 10, 1 | 2 => 20, 3..=9 => 30, -5..0 => 40, i32::MIN..=-100 => 50, n if n > 1000 => n / 2, _ => -1 } }
    fn match_bool(b: bool, x: f32) -> f32 { match b { true => x, false => -x } }
    fn match_u8(x: u8) -> u32 { match x { 0..=9 => 1, 10..=99 => 2, _ => 3 } }
    fn match_binding(x: i64) -> i64 { match x % 7 { r @ 0..=3 => r * 2, r => r } }
    fn match_guard_last(x: u16) -> u16 { match x { 0 => 1, n if n % 2 == 0 => n / 2, n => n.wrapping_mul(3) + 1 } }
    fn match_in_loop(n: u8) -> u32 { let mut s = 0u32; for i in 0..n { s += match i % 4 { 0 => 1, 1 | 3 => { if i > 100 { break; } 2 } _ => continue }; } s }
    fn nested_helpers(x: f64, y: f64) -> f64 { const K: f64 = 0.5; fn sq(v: f64) -> f64 { v * v } fn norm(a: f64, b: f64) -> f64 { (sq(a) + sq(b)).sqrt() } norm(x, y) * K }
    fn nested_fault(a: i32, b: i32) -> i32 { fn q(a: i32, b: i32) -> i32 { a / b } fn r(a: i32, b: i32) -> i32 { a % b } q(a, b).wrapping_add(r(b, a)) }
    fn nested_loop_fault(n: u8, d: u8) -> u32 { fn step(i: u8, d: u8) -> u32 { (i / d) as u32 } let mut s = 0u32; for i in 0..n { s += step(i, d); } s }
    fn polar(x: f32, y: f32) -> (f32, f32) { if x == 0.0 && y == 0.0 { (0.0, 0.0) } else { ((x * x + y * y).sqrt(), y.atan2(x)) } }
    fn divmod(a: i32, b: i32) -> (i32, i32, bool) { fn dm(a: i32, b: i32) -> (i32, i32) { (a.wrapping_div(b), a.wrapping_rem(b)) } let (q, r) = dm(a, b); let t = (q, r); (t.0, t.1, r < 0) }
    fn trig_mix(x: f32, y: f32) -> f32 { x.sin() * y.cos() + x.atan2(y) - x.hypot(y).ln_1p() }
}
