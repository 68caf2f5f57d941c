//! The scalar types a vectorized function computes with.

use std::fmt;

/// A scalar type of the kernel language. `isize`/`usize` are distinct types (as in Rust)
/// that lower to 64-bit integers.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum ScalarType {
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
    /// `half::f16`: IEEE binary16, a storage type computed through `f32` (as the `half`
    /// crate computes it).
    F16,
    /// `half::bf16`: bfloat16, likewise.
    BF16,
    /// `num_complex::Complex<f32>`: two `f32`s, `re` then `im` (`#[repr(C)]`, the layout of
    /// CUDA's `float2` with the alignment of `f32`). A scalar as NumPy's `complex64` is one:
    /// an element of arrays, a parameter and a result; its arithmetic is written out over
    /// its parts as num-complex computes it.
    C32,
    /// `num_complex::Complex<f64>`, likewise over `f64`s.
    C64,
    /// A user struct (`#[derive(GpuType)]`, `#[repr(C)]`): an element of arrays and slices,
    /// a local, a parameter and a result of device functions; its fields are read and
    /// written one by one. Its definition is in the process's struct table ([`StructId`]).
    Struct(StructId),
}

/// A user struct's index in the struct table of the process (the compiler's, in the proc
/// macro): equal definitions share an id, so the same struct reached through two paths is
/// one type.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct StructId(u32);

/// A field of a user struct: `name: ty` or `name: [ty; len]`.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct FieldDef {
    pub name: String,
    pub ty: ScalarType,
    /// `Some(n)` for an array field `[ty; n]`.
    pub len: Option<u64>,
}

impl FieldDef {
    /// The field's bytes (an array's, all its elements).
    pub fn size_bytes(&self) -> u64 {
        u64::from(self.ty.size_bytes()) * self.len.unwrap_or(1)
    }
}

/// A user struct's definition: its name (as its definition writes it) and its fields in
/// order. Its layout is `#[repr(C)]`'s ([`StructDef::offsets`]).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct StructDef {
    pub name: String,
    pub fields: Vec<FieldDef>,
}

impl StructDef {
    /// Each field's offset in bytes, as `#[repr(C)]` lays them out: in order, each at the
    /// next multiple of its alignment.
    pub fn offsets(&self) -> Vec<u64> {
        let mut at = 0u64;
        self.fields
            .iter()
            .map(|f| {
                let align = u64::from(f.ty.align_bytes());
                at = at.div_ceil(align) * align;
                let offset = at;
                at += f.size_bytes();
                offset
            })
            .collect()
    }

    /// The largest alignment of its fields (1 for a struct without fields).
    pub fn align(&self) -> u32 {
        self.fields.iter().map(|f| f.ty.align_bytes()).max().unwrap_or(1)
    }

    /// The size in bytes: past the last field, rounded up to the alignment.
    pub fn size(&self) -> u64 {
        let end = self.offsets().last().zip(self.fields.last()).map_or(0, |(o, f)| o + f.size_bytes());
        let align = u64::from(self.align());
        end.div_ceil(align) * align
    }

    /// The field named `name`, and its index.
    pub fn field(&self, name: &str) -> Option<(usize, &FieldDef)> {
        self.fields.iter().enumerate().find(|(_, f)| f.name == name)
    }
}

/// The struct table: every definition once, for the life of the process (a proc macro's
/// process compiles one crate; a definition is a few fields).
static STRUCTS: std::sync::Mutex<Vec<&'static StructDef>> = std::sync::Mutex::new(Vec::new());

/// The ids of definitions by the key their `#[derive(GpuType)]` gave them (the struct's
/// name and a hash of its definition): filled by [`StructId::define`] from the definitions
/// an expansion carries, so a key always names the definition it was made from.
static KEYS: std::sync::Mutex<Vec<(String, StructId)>> = std::sync::Mutex::new(Vec::new());

impl StructId {
    /// Enters `def` under `key`, and returns its id.
    pub fn define(key: &str, def: StructDef) -> StructId {
        let id = StructId::intern(def);
        let mut keys = KEYS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if !keys.iter().any(|(k, _)| k == key) {
            keys.push((key.to_string(), id));
        }
        id
    }

    /// The struct entered under `key`, if any.
    pub fn by_key(key: &str) -> Option<StructId> {
        let keys = KEYS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        keys.iter().find(|(k, _)| k == key).map(|(_, id)| *id)
    }

    /// A key the struct was entered under (equal definitions share an id, so any of its
    /// keys names it), if it was entered under one.
    pub fn key(self) -> Option<String> {
        let keys = KEYS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        keys.iter().find(|(_, id)| *id == self).map(|(k, _)| k.clone())
    }

    /// The id of `def`, entered in the table if it is new.
    pub fn intern(def: StructDef) -> StructId {
        let mut table = STRUCTS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(i) = table.iter().position(|d| **d == def) {
            return StructId(i as u32);
        }
        table.push(Box::leak(Box::new(def)));
        StructId(table.len() as u32 - 1)
    }

    pub fn def(self) -> &'static StructDef {
        STRUCTS.lock().unwrap_or_else(std::sync::PoisonError::into_inner)[self.0 as usize]
    }
}

impl ScalarType {
    pub const ALL: [ScalarType; 17] = [
        ScalarType::Bool,
        ScalarType::I8,
        ScalarType::I16,
        ScalarType::I32,
        ScalarType::I64,
        ScalarType::Isize,
        ScalarType::U8,
        ScalarType::U16,
        ScalarType::U32,
        ScalarType::U64,
        ScalarType::Usize,
        ScalarType::F32,
        ScalarType::F64,
        ScalarType::F16,
        ScalarType::BF16,
        ScalarType::C32,
        ScalarType::C64,
    ];

    /// The type's name as written in Rust source.
    pub fn rust_name(self) -> &'static str {
        match self {
            ScalarType::Bool => "bool",
            ScalarType::I8 => "i8",
            ScalarType::I16 => "i16",
            ScalarType::I32 => "i32",
            ScalarType::I64 => "i64",
            ScalarType::Isize => "isize",
            ScalarType::U8 => "u8",
            ScalarType::U16 => "u16",
            ScalarType::U32 => "u32",
            ScalarType::U64 => "u64",
            ScalarType::Usize => "usize",
            ScalarType::F32 => "f32",
            ScalarType::F64 => "f64",
            ScalarType::F16 => "f16",
            ScalarType::BF16 => "bf16",
            ScalarType::C32 => "Complex<f32>",
            ScalarType::C64 => "Complex<f64>",
            ScalarType::Struct(id) => &id.def().name,
        }
    }

    /// The user struct's definition, for a struct type.
    pub fn struct_def(self) -> Option<&'static StructDef> {
        match self {
            ScalarType::Struct(id) => Some(id.def()),
            _ => None,
        }
    }

    /// A user struct (`#[derive(GpuType)]`).
    pub fn is_struct(self) -> bool {
        matches!(self, ScalarType::Struct(_))
    }

    pub fn from_name(name: &str) -> Option<ScalarType> {
        ScalarType::ALL.into_iter().find(|t| t.rust_name() == name)
    }

    /// `f32` and `f64`: Rust's primitive floats (literals, `as` casts and the float methods).
    pub fn is_float(self) -> bool {
        matches!(self, ScalarType::F32 | ScalarType::F64)
    }

    /// `f16` and `bf16` (the `half` crate's): arithmetic and comparisons as floats, but no
    /// literals and no `as` casts (they are not primitive types in Rust).
    pub fn is_half(self) -> bool {
        matches!(self, ScalarType::F16 | ScalarType::BF16)
    }

    /// A float of any width: IEEE arithmetic, no faults.
    pub fn is_floating(self) -> bool {
        self.is_float() || self.is_half()
    }

    /// `Complex<f32>` and `Complex<f64>`.
    pub fn is_complex(self) -> bool {
        matches!(self, ScalarType::C32 | ScalarType::C64)
    }

    /// The type of a complex type's parts (`f32` for `Complex<f32>`).
    pub fn complex_part(self) -> Option<ScalarType> {
        match self {
            ScalarType::C32 => Some(ScalarType::F32),
            ScalarType::C64 => Some(ScalarType::F64),
            _ => None,
        }
    }

    /// The complex type whose parts are `part` (`f32` or `f64`).
    pub fn complex_of(part: ScalarType) -> Option<ScalarType> {
        match part {
            ScalarType::F32 => Some(ScalarType::C32),
            ScalarType::F64 => Some(ScalarType::C64),
            _ => None,
        }
    }

    pub fn is_int(self) -> bool {
        !self.is_floating() && !self.is_complex() && !self.is_struct() && self != ScalarType::Bool
    }

    pub fn is_signed_int(self) -> bool {
        matches!(self, ScalarType::I8 | ScalarType::I16 | ScalarType::I32 | ScalarType::I64 | ScalarType::Isize)
    }

    pub fn is_unsigned_int(self) -> bool {
        self.is_int() && !self.is_signed_int()
    }

    /// Width in bits of the value (bool: 1).
    pub fn bits(self) -> u32 {
        match self {
            ScalarType::Bool => 1,
            ScalarType::I8 | ScalarType::U8 => 8,
            ScalarType::I16 | ScalarType::U16 | ScalarType::F16 | ScalarType::BF16 => 16,
            ScalarType::I32 | ScalarType::U32 | ScalarType::F32 => 32,
            ScalarType::I64 | ScalarType::Isize | ScalarType::U64 | ScalarType::Usize | ScalarType::F64 => 64,
            ScalarType::C32 => 64,
            ScalarType::C64 => 128,
            ScalarType::Struct(id) => 8 * id.def().size() as u32,
        }
    }

    /// Size in bytes in memory (Rust's layout: bool is one byte).
    pub fn size_bytes(self) -> u32 {
        self.bits().div_ceil(8)
    }

    /// Alignment in bytes in memory, Rust's (a complex type's is its parts', a struct's
    /// its largest field's).
    pub fn align_bytes(self) -> u32 {
        match (self.complex_part(), self) {
            (Some(part), _) => part.size_bytes(),
            (None, ScalarType::Struct(id)) => id.def().align(),
            (None, _) => self.size_bytes(),
        }
    }

    /// Smallest and largest value of an integer type, as i128.
    pub fn int_range(self) -> Option<(i128, i128)> {
        if !self.is_int() {
            return None;
        }
        let bits = self.bits();
        Some(if self.is_signed_int() {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        } else {
            (0, (1i128 << bits) - 1)
        })
    }
}

impl fmt::Display for ScalarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.rust_name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for t in ScalarType::ALL {
            assert_eq!(ScalarType::from_name(t.rust_name()), Some(t));
        }
        // The half types are named as the `half` crate names them; no other name is a type.
        assert_eq!(ScalarType::from_name("f16"), Some(ScalarType::F16));
        assert_eq!(ScalarType::from_name("f128"), None);
    }

    #[test]
    fn integer_ranges() {
        assert_eq!(ScalarType::I8.int_range(), Some((-128, 127)));
        assert_eq!(ScalarType::U64.int_range(), Some((0, u64::MAX as i128)));
        assert_eq!(ScalarType::Isize.int_range(), Some((i64::MIN as i128, i64::MAX as i128)));
        assert_eq!(ScalarType::F32.int_range(), None);
        assert_eq!(ScalarType::Bool.size_bytes(), 1);
    }
}
