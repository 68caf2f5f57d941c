//! Arguments to call a generated function with: the values that break careless code
//! (MIN, MAX, 0, -1, NaN, ±inf, ±0, subnormals) first, then random ones.

use crate::rng::Rng;
use crate::ty::{Ty, Value};

/// The edge values of a type.
pub fn edges(t: Ty) -> Vec<Value> {
    match t {
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
