//! The scalar types of the kernel language and their values.

/// A scalar type of the kernel language.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Ty {
    Bool,
    I8,
    I16,
    I32,
    I64,
    Isize,
    U8,
    U16,
    U32,
    U64,
    Usize,
    F32,
    F64,
}

impl Ty {
    pub const ALL: [Ty; 13] = [
        Ty::Bool,
        Ty::I8,
        Ty::I16,
        Ty::I32,
        Ty::I64,
        Ty::Isize,
        Ty::U8,
        Ty::U16,
        Ty::U32,
        Ty::U64,
        Ty::Usize,
        Ty::F32,
        Ty::F64,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Ty::Bool => "bool",
            Ty::I8 => "i8",
            Ty::I16 => "i16",
            Ty::I32 => "i32",
            Ty::I64 => "i64",
            Ty::Isize => "isize",
            Ty::U8 => "u8",
            Ty::U16 => "u16",
            Ty::U32 => "u32",
            Ty::U64 => "u64",
            Ty::Usize => "usize",
            Ty::F32 => "f32",
            Ty::F64 => "f64",
        }
    }

    pub fn is_int(self) -> bool {
        !matches!(self, Ty::Bool | Ty::F32 | Ty::F64)
    }

    pub fn is_signed(self) -> bool {
        matches!(self, Ty::I8 | Ty::I16 | Ty::I32 | Ty::I64 | Ty::Isize)
    }

    pub fn is_unsigned(self) -> bool {
        matches!(self, Ty::U8 | Ty::U16 | Ty::U32 | Ty::U64 | Ty::Usize)
    }

    pub fn is_float(self) -> bool {
        matches!(self, Ty::F32 | Ty::F64)
    }

    /// The width in bits (`isize`/`usize` are 64-bit on every target the project has).
    pub fn bits(self) -> u32 {
        match self {
            Ty::Bool | Ty::I8 | Ty::U8 => 8,
            Ty::I16 | Ty::U16 => 16,
            Ty::I32 | Ty::U32 | Ty::F32 => 32,
            Ty::I64 | Ty::Isize | Ty::U64 | Ty::Usize | Ty::F64 => 64,
        }
    }

    /// The smallest and largest value of an integer type.
    pub fn int_range(self) -> (i128, i128) {
        let b = self.bits();
        if self.is_signed() { (-(1i128 << (b - 1)), (1i128 << (b - 1)) - 1) } else { (0, (1i128 << b) - 1) }
    }

    /// The unsigned integer of the same width (`i16` → `u16`).
    pub fn unsigned(self) -> Ty {
        match self {
            Ty::I8 => Ty::U8,
            Ty::I16 => Ty::U16,
            Ty::I32 => Ty::U32,
            Ty::I64 => Ty::U64,
            Ty::Isize => Ty::Usize,
            t => t,
        }
    }

    /// The type rustc gives an unsuffixed literal of this kind that nothing constrains.
    pub fn fallback(self) -> Ty {
        if self.is_float() { Ty::F64 } else { Ty::I32 }
    }
}

/// A value of a scalar type.
#[derive(Copy, Clone, Debug)]
pub enum Value {
    Bool(bool),
    I8(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    Isize(isize),
    U8(u8),
    U16(u16),
    U32(u32),
    U64(u64),
    Usize(usize),
    F32(f32),
    F64(f64),
}

/// Calls `$body` with `$x` bound to the primitive inside an integer value (`$v`), or
/// evaluates `$other` for floats and `bool`.
#[macro_export]
#[doc(hidden)]
macro_rules! with_int {
    ($v:expr, $x:ident => $body:expr, _ => $other:expr) => {
        match $v {
            $crate::ty::Value::I8($x) => $body,
            $crate::ty::Value::I16($x) => $body,
            $crate::ty::Value::I32($x) => $body,
            $crate::ty::Value::I64($x) => $body,
            $crate::ty::Value::Isize($x) => $body,
            $crate::ty::Value::U8($x) => $body,
            $crate::ty::Value::U16($x) => $body,
            $crate::ty::Value::U32($x) => $body,
            $crate::ty::Value::U64($x) => $body,
            $crate::ty::Value::Usize($x) => $body,
            _ => $other,
        }
    };
}

impl Value {
    pub fn ty(self) -> Ty {
        match self {
            Value::Bool(_) => Ty::Bool,
            Value::I8(_) => Ty::I8,
            Value::I16(_) => Ty::I16,
            Value::I32(_) => Ty::I32,
            Value::I64(_) => Ty::I64,
            Value::Isize(_) => Ty::Isize,
            Value::U8(_) => Ty::U8,
            Value::U16(_) => Ty::U16,
            Value::U32(_) => Ty::U32,
            Value::U64(_) => Ty::U64,
            Value::Usize(_) => Ty::Usize,
            Value::F32(_) => Ty::F32,
            Value::F64(_) => Ty::F64,
        }
    }

    /// The value's bits in the low bytes of a `u64`, as the runtime passes scalars (`bool`
    /// as 0 or 1).
    pub fn to_bits(self) -> u64 {
        match self {
            Value::Bool(b) => b as u64,
            Value::I8(x) => x as u8 as u64,
            Value::I16(x) => x as u16 as u64,
            Value::I32(x) => x as u32 as u64,
            Value::I64(x) => x as u64,
            Value::Isize(x) => x as u64,
            Value::U8(x) => x as u64,
            Value::U16(x) => x as u64,
            Value::U32(x) => x as u64,
            Value::U64(x) => x,
            Value::Usize(x) => x as u64,
            Value::F32(x) => x.to_bits() as u64,
            Value::F64(x) => x.to_bits(),
        }
    }

    /// The value of type `ty` whose bits are the low bytes of `bits`.
    pub fn from_bits(ty: Ty, bits: u64) -> Value {
        match ty {
            Ty::Bool => Value::Bool(bits as u8 != 0),
            Ty::I8 => Value::I8(bits as i8),
            Ty::I16 => Value::I16(bits as i16),
            Ty::I32 => Value::I32(bits as i32),
            Ty::I64 => Value::I64(bits as i64),
            Ty::Isize => Value::Isize(bits as isize),
            Ty::U8 => Value::U8(bits as u8),
            Ty::U16 => Value::U16(bits as u16),
            Ty::U32 => Value::U32(bits as u32),
            Ty::U64 => Value::U64(bits),
            Ty::Usize => Value::Usize(bits as usize),
            Ty::F32 => Value::F32(f32::from_bits(bits as u32)),
            Ty::F64 => Value::F64(f64::from_bits(bits)),
        }
    }

    /// An integer value of type `ty` (wrapped into its range).
    pub fn int(ty: Ty, v: i128) -> Value {
        assert!(ty.is_int(), "{ty:?} is not an integer type");
        Value::from_bits(ty, v as u64)
    }

    /// A float value of type `ty` (rounded once to `f32` for `f32`).
    pub fn float(ty: Ty, v: f64) -> Value {
        match ty {
            Ty::F32 => Value::F32(v as f32),
            Ty::F64 => Value::F64(v),
            _ => panic!("{ty:?} is not a float type"),
        }
    }

    /// An integer value as an `i128` (exact for every integer type).
    pub fn as_i128(self) -> Option<i128> {
        with_int!(self, x => Some(x as i128), _ => None)
    }

    /// A float value as an `f64` (exact for `f32`).
    pub fn as_f64(self) -> Option<f64> {
        match self {
            Value::F32(x) => Some(x as f64),
            Value::F64(x) => Some(x),
            _ => None,
        }
    }

    /// The same value (NaN is the same as any NaN of its type; `0.0` and `-0.0` differ).
    pub fn same(self, other: Value) -> bool {
        match (self.as_f64(), other.as_f64()) {
            (Some(a), Some(b)) if a.is_nan() || b.is_nan() => a.is_nan() && b.is_nan() && self.ty() == other.ty(),
            _ => self.ty() == other.ty() && self.to_bits() == other.to_bits(),
        }
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Value::Bool(b) => write!(f, "{b}"),
            Value::F32(x) => write!(f, "{x:?}f32 ({:#010x})", x.to_bits()),
            Value::F64(x) => write!(f, "{x:?}f64 ({:#018x})", x.to_bits()),
            v => with_int!(v, x => write!(f, "{x}{}", v.ty().name()), _ => unreachable!()),
        }
    }
}
