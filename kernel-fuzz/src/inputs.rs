//! Arguments to call a generated function with: the values that break careless code
//! (MIN, MAX, 0, -1, NaN, ±inf, ±0, subnormals) first, then random ones.

use crate::float16::from_f64;
use crate::rng::Rng;
use crate::ty::{Ty, Value};

/// The edge values of a type.
pub fn edges(t: Ty) -> Vec<Value> {
    match t {
        // ±0, ±1, ±0.5, 1.5, ±2.5, NaN, ±inf, the smallest normal, the smallest and
        // (negated) largest subnormal, ±MAX, 0.1, 3.5, EPSILON, a value just under 1 and one
        // where the next step is 2 (f16: 2048) or 2^8 (bf16: 2^16).
        Ty::F16 => [
            0x0000, 0x8000, 0x3C00, 0xBC00, 0x3800, 0xB800, 0x3E00, 0x4100, 0xC100, 0x7E00, 0x7C00, 0xFC00, 0x0400,
            0x0001, 0x83FF, 0x7BFF, 0xFBFF, 0x2E66, 0x4300, 0x1400, 0x3BFF, 0x6800,
        ]
        .into_iter()
        .map(Value::F16)
        .collect(),
        Ty::BF16 => [
            0x0000, 0x8000, 0x3F80, 0xBF80, 0x3F00, 0xBF00, 0x3FC0, 0x4020, 0xC020, 0x7FC0, 0x7F80, 0xFF80, 0x0080,
            0x0001, 0x807F, 0x7F7F, 0xFF7F, 0x3DCD, 0x4060, 0x3C00, 0x3F7F, 0x4780,
        ]
        .into_iter()
        .map(Value::BF16)
        .collect(),
        // Pairs of the parts' edge values: each value as `re` beside another as `im` (a
        // zero, a NaN, an infinity or an ordinary value next to each), and a few more.
        Ty::C32 | Ty::C64 => {
            let p = t.part().expect("a complex type");
            let parts = edges(p);
            let n = parts.len();
            let mut out: Vec<Value> = (0..n).map(|i| Value::complex(t, parts[i], parts[(i * 7 + 3) % n])).collect();
            for (re, im) in [(0.0, 0.0), (-0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (0.0, -1.0), (3.0, -4.0), (1e-30, 1e30)] {
                out.push(Value::complex(t, Value::float(p, re), Value::float(p, im)));
            }
            out
        }
        Ty::Bool => vec![Value::Bool(false), Value::Bool(true)],
        Ty::F32 => [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            -0.5,
            1.5,
            2.5,
            -2.5,
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::MIN_POSITIVE,
            1e-45,
            -3e-40,
            f32::MAX,
            f32::MIN,
            0.1,
            3.5,
            1e10,
            8388607.5,
            0.49999997,
            16777217.0,
        ]
        .into_iter()
        .map(Value::F32)
        .collect(),
        Ty::F64 => [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            -0.5,
            1.5,
            2.5,
            -2.5,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MIN_POSITIVE,
            5e-324,
            -1.5e-310,
            f64::MAX,
            f64::MIN,
            0.1,
            3.5,
            1e10,
            4503599627370495.5,
            0.49999999999999994,
            9007199254740993.0,
        ]
        .into_iter()
        .map(Value::F64)
        .collect(),
        t => {
            let (min, max) = t.int_range();
            let mut v: Vec<i128> = vec![0, 1, 2, 3, 7, 8, 31, 32, 64, 100, max, min, max - 1, min + 1, max / 2 + 1];
            if t.is_signed() {
                v.extend([-1, -2, -8, -100]);
            }
            v.into_iter().filter(|x| (min..=max).contains(x)).map(|x| Value::int(t, x)).collect()
        }
    }
}

/// A random value of `t`: any bit pattern, or a small or moderate number.
pub fn random(t: Ty, rng: &mut Rng) -> Value {
    match t {
        Ty::F16 | Ty::BF16 => {
            if rng.chance(1, 4) {
                Value::from_bits(t, rng.next_u64())
            } else {
                let Value::F32(x) = random(Ty::F32, rng) else { unreachable!() };
                Value::half_bits(t, from_f64(t.half().expect("a half type"), x as f64))
            }
        }
        Ty::C32 | Ty::C64 => {
            let p = t.part().expect("a complex type");
            let zero = Value::zero(p);
            match rng.below(4) {
                0 => Value::complex(t, random(p, rng), zero),
                1 => Value::complex(t, zero, random(p, rng)),
                _ => Value::complex(t, random(p, rng), random(p, rng)),
            }
        }
        Ty::Bool => Value::Bool(rng.chance(1, 2)),
        Ty::F32 | Ty::F64 => match rng.below(4) {
            0 => Value::from_bits(t, rng.next_u64()),
            1 => Value::float(t, rng.unit() * 2.0 - 1.0),
            2 => Value::float(t, (rng.unit() * 2000.0 - 1000.0).round() / 4.0),
            _ => Value::float(t, (rng.unit() - 0.5) * 10f64.powi(rng.range(-40, 40) as i32)),
        },
        t => match rng.below(3) {
            0 => Value::from_bits(t, rng.next_u64()),
            1 => Value::int(t, rng.range(-300, 300)),
            _ => Value::int(t, rng.range(0, 70)),
        },
    }
}

/// `n` argument lists for parameters of types `params`: edge values in every position
/// first, then a mix of edge and random values.
pub fn inputs(seed: u64, params: &[Ty], n: usize) -> Vec<Vec<Value>> {
    let mut rng = Rng::new(seed ^ 0xA5A5_0F0F_5A5A_F0F0);
    if params.is_empty() {
        return vec![Vec::new()];
    }
    let edges: Vec<Vec<Value>> = params.iter().map(|t| edges(*t)).collect();
    let longest = edges.iter().map(Vec::len).max().unwrap_or(0);
    (0..n)
        .map(|i| {
            (0..params.len())
                .map(|j| {
                    if i < longest {
                        // Each position walks through its edge values at its own pace.
                        edges[j][(i * (2 * j + 1) + j) % edges[j].len()]
                    } else if rng.chance(1, 2) {
                        *rng.pick(&edges[j])
                    } else {
                        random(params[j], &mut rng)
                    }
                })
                .collect()
        })
        .collect()
}
