//! Vectorized functions called over columns whose element types are known only at run
//! time: what a query engine needs (`gpu-datafusion` maps Arrow arrays to these types and
//! back). Nothing here names an engine's types.
//!
//! For a function whose parameters and results are all [`ColumnType`]s, `#[vectorize]`
//! generates `name::COLUMNAR`, a [`Columnar`]: one [`ColumnFn`] per compiled type (one, or
//! one per type of `types(…)`). A constant costs nothing where it is not used: the calls
//! behind it are compiled only in a crate that names it.

use std::marker::PhantomData;

use crate::data::{ArgRef, DeviceSlice, DeviceVec, OutRef, Results};
use crate::driver::Device;
use crate::error::{Error, Result};
use crate::scalar::Scalar;

use super::vectorized::{GpuFn, into_on, on};

/// The element type of a column.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Bool,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F16,
    F32,
    F64,
}

impl Kind {
    /// The Rust type's name (`f32`, `half::f16`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Bool => "bool",
            Kind::I8 => "i8",
            Kind::I16 => "i16",
            Kind::I32 => "i32",
            Kind::I64 => "i64",
            Kind::U8 => "u8",
            Kind::U16 => "u16",
            Kind::U32 => "u32",
            Kind::U64 => "u64",
            Kind::F16 => "f16",
            Kind::F32 => "f32",
            Kind::F64 => "f64",
        }
    }
}

macro_rules! kinds {
    ($($kind:ident $t:ty),*) => {
        /// A column's values, borrowed where they are (no copy).
        #[derive(Copy, Clone, Debug)]
        pub enum Values<'a> {
            $($kind(&'a [$t]),)*
        }

        /// A column's values in a device's memory, borrowed (read in place by a call on
        /// that device).
        #[derive(Copy, Clone, Debug)]
        pub enum DeviceValues<'a> {
            $($kind(DeviceSlice<'a, $t>),)*
        }

        /// A column copied to a device's memory, which calls on that device read in place
        /// ([`DeviceColumn::values`], [`ColumnArg::Device`]).
        #[derive(Debug)]
        pub enum DeviceColumn {
            $($kind(DeviceVec<$t>),)*
        }

        /// A column's values to write, borrowed mutably (a result column's memory).
        #[derive(Debug)]
        pub enum ValuesMut<'a> {
            $($kind(&'a mut [$t]),)*
        }

        /// One value of a column's type.
        #[derive(Copy, Clone, Debug, PartialEq)]
        pub enum Value {
            $($kind($t),)*
        }

        /// A result column.
        #[derive(Clone, Debug, PartialEq)]
        pub enum Column {
            $($kind(Vec<$t>),)*
        }

        impl Values<'_> {
            pub fn kind(&self) -> Kind {
                match self {
                    $(Values::$kind(_) => Kind::$kind,)*
                }
            }

            pub fn len(&self) -> usize {
                match self {
                    $(Values::$kind(v) => v.len(),)*
                }
            }

            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }

            /// The address of the first element (where the values are in memory).
            pub fn as_ptr(&self) -> *const u8 {
                match self {
                    $(Values::$kind(v) => v.as_ptr().cast(),)*
                }
            }

            /// The elements at `rows`, in order, copied (a row past the end is `None`).
            pub fn take(&self, rows: &[usize]) -> Option<Column> {
                Some(match self {
                    $(Values::$kind(v) => {
                        Column::$kind(rows.iter().map(|&r| v.get(r).copied()).collect::<Option<Vec<_>>>()?)
                    })*
                })
            }
        }

        impl<'a> DeviceValues<'a> {
            pub fn kind(&self) -> Kind {
                match self {
                    $(DeviceValues::$kind(_) => Kind::$kind,)*
                }
            }

            pub fn len(&self) -> usize {
                match self {
                    $(DeviceValues::$kind(v) => v.len(),)*
                }
            }

            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }

            /// The device whose memory holds the values.
            pub fn device(&self) -> &'a Device {
                match self {
                    $(DeviceValues::$kind(v) => v.device(),)*
                }
            }

            /// The elements in `range` (an out-of-bounds range is `Error::OutOfRange`).
            pub fn slice(&self, range: std::ops::Range<usize>) -> Result<DeviceValues<'a>> {
                Ok(match self {
                    $(DeviceValues::$kind(v) => DeviceValues::$kind(v.slice(range)?),)*
                })
            }

            /// The values copied back to the host.
            pub fn to_column(&self) -> Result<Column> {
                Ok(match self {
                    $(DeviceValues::$kind(v) => Column::$kind(v.to_vec()?),)*
                })
            }
        }

        impl DeviceColumn {
            /// A copy of `values` on `device` (waits for the copy).
            pub fn on(device: &Device, values: Values<'_>) -> Result<DeviceColumn> {
                Ok(match values {
                    $(Values::$kind(v) => DeviceColumn::$kind(DeviceVec::from_slice_on(device, v)?),)*
                })
            }

            pub fn kind(&self) -> Kind {
                self.values().kind()
            }

            pub fn len(&self) -> usize {
                self.values().len()
            }

            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }

            /// The device whose memory holds the column.
            pub fn device(&self) -> &Device {
                match self {
                    $(DeviceColumn::$kind(v) => v.device(),)*
                }
            }

            /// The values, borrowed.
            pub fn values(&self) -> DeviceValues<'_> {
                match self {
                    $(DeviceColumn::$kind(v) => DeviceValues::$kind(v.as_slice()),)*
                }
            }
        }

        impl crate::data::PageLocked<u8> {
            /// The first `len` elements of type `kind` of this memory (`None` where they do
            /// not fit, or for `Bool`, which not every byte is), to write a result column
            /// into.
            pub fn column_mut(&mut self, kind: Kind, len: usize) -> Option<ValuesMut<'_>> {
                if kind == Kind::Bool {
                    return None;
                }
                let bytes = self.as_mut_slice();
                match kind {
                    $(Kind::$kind => {
                        if len.checked_mul(std::mem::size_of::<$t>())? > bytes.len() {
                            return None;
                        }
                        let ptr = bytes.as_mut_ptr().cast::<$t>();
                        if !ptr.is_aligned() {
                            return None;
                        }
                        // SAFETY: `len` elements fit in the borrowed bytes, at an aligned
                        // address, and every bit pattern is a valid number of this kind
                        // (`Bool` returned above).
                        Some(ValuesMut::$kind(unsafe { std::slice::from_raw_parts_mut(ptr, len) }))
                    })*
                }
            }
        }

        impl Kind {
            /// The bytes of one value (a `bool`'s one byte in a Rust slice; Arrow packs
            /// booleans into bits).
            pub fn size(self) -> usize {
                match self {
                    $(Kind::$kind => std::mem::size_of::<$t>(),)*
                }
            }
        }

        impl ValuesMut<'_> {
            pub fn kind(&self) -> Kind {
                match self {
                    $(ValuesMut::$kind(_) => Kind::$kind,)*
                }
            }

            pub fn len(&self) -> usize {
                match self {
                    $(ValuesMut::$kind(v) => v.len(),)*
                }
            }

            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }
        }

        impl Value {
            pub fn kind(&self) -> Kind {
                match self {
                    $(Value::$kind(_) => Kind::$kind,)*
                }
            }
        }

        impl Column {
            pub fn kind(&self) -> Kind {
                match self {
                    $(Column::$kind(_) => Kind::$kind,)*
                }
            }

            pub fn len(&self) -> usize {
                match self {
                    $(Column::$kind(v) => v.len(),)*
                }
            }

            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }

            /// The element at `i` (`None` past the end).
            pub fn get(&self, i: usize) -> Option<Value> {
                match self {
                    $(Column::$kind(v) => v.get(i).copied().map(Value::$kind),)*
                }
            }

            /// The values, borrowed.
            pub fn values(&self) -> Values<'_> {
                match self {
                    $(Column::$kind(v) => Values::$kind(v),)*
                }
            }

            /// The elements at `rows`, in order (a row past the end is `None`).
            pub fn take(&self, rows: &[usize]) -> Option<Column> {
                self.values().take(rows)
            }

            /// A column of `len` elements holding this one's elements at `rows` (one per
            /// element, in order) and the all-zero value elsewhere; `None` if a row is past
            /// `len` or the lengths differ.
            pub fn scatter(&self, rows: &[usize], len: usize) -> Option<Column> {
                if rows.len() != self.len() || rows.iter().any(|&r| r >= len) {
                    return None;
                }
                Some(match self {
                    $(Column::$kind(v) => {
                        let mut out = vec![crate::scalar::zeroed::<$t>(); len];
                        for (&r, x) in rows.iter().zip(v) {
                            out[r] = *x;
                        }
                        Column::$kind(out)
                    })*
                })
            }
        }

        $(
            impl ColumnType for $t {
                const KIND: Kind = Kind::$kind;
                fn values(v: Values<'_>) -> Option<&[$t]> {
                    match v {
                        Values::$kind(s) => Some(s),
                        #[allow(unreachable_patterns)]
                        _ => None,
                    }
                }
                fn device_values(v: DeviceValues<'_>) -> Option<DeviceSlice<'_, $t>> {
                    match v {
                        DeviceValues::$kind(s) => Some(s),
                        #[allow(unreachable_patterns)]
                        _ => None,
                    }
                }
                fn values_mut<'a>(v: ValuesMut<'a>) -> Option<&'a mut [$t]> {
                    match v {
                        ValuesMut::$kind(s) => Some(s),
                        #[allow(unreachable_patterns)]
                        _ => None,
                    }
                }
                fn value(v: Value) -> Option<$t> {
                    match v {
                        Value::$kind(x) => Some(x),
                        #[allow(unreachable_patterns)]
                        _ => None,
                    }
                }
                fn column(v: Vec<$t>) -> Column {
                    Column::$kind(v)
                }
                fn wrap(v: $t) -> Value {
                    Value::$kind(v)
                }
            }

            impl ColumnResults for $t {
                const KINDS: &'static [Kind] = &[Kind::$kind];
                const TUPLE: bool = false;
                fn columns(host: Vec<$t>) -> Vec<Column> {
                    vec![Column::$kind(host)]
                }
                fn outs(outs: Vec<ValuesMut<'_>>) -> Result<OutRef<'_, $t>, usize> {
                    let mut outs = outs.into_iter();
                    match (outs.next(), outs.next()) {
                        (Some(v), None) => <$t as ColumnType>::values_mut(v).map(OutRef::Host).ok_or(0),
                        (None, _) => Err(0),
                        (Some(_), Some(_)) => Err(1),
                    }
                }
            }
        )*
    };
}

kinds!(Bool bool, I8 i8, I16 i16, I32 i32, I64 i64, U8 u8, U16 u16, U32 u32, U64 u64, F16 half::f16, F32 f32, F64 f64);

/// A scalar type that columns hold: `bool`, the fixed-width integers, `f16`, `f32`, `f64`
/// (not `isize`/`usize`, `bf16` or complex numbers, which query engines' columns do not
/// have).
pub trait ColumnType: Scalar {
    const KIND: Kind;
    /// The values, if the column holds this type.
    fn values(v: Values<'_>) -> Option<&[Self]>;
    /// The values to write, if the column holds this type.
    fn values_mut(v: ValuesMut<'_>) -> Option<&mut [Self]>;
    /// The device values, if the column holds this type.
    fn device_values(v: DeviceValues<'_>) -> Option<DeviceSlice<'_, Self>>;
    /// The value, if it has this type.
    fn value(v: Value) -> Option<Self>;
    /// A result column of these values.
    fn column(v: Vec<Self>) -> Column;
    /// The value as a [`Value`].
    fn wrap(v: Self) -> Value;
}

/// A reducible function's fold over one column (see [`ColumnFn::reduce`]).
pub type ReduceFn = fn(&Device, Values<'_>) -> Result<Value>;

/// The fold `reduce` (a function's `reduce_on`) over `values`, which must hold `T`s: for the
/// generated `COLUMNAR` constants of reducible functions.
#[doc(hidden)]
pub fn reduce_with<T: ColumnType>(
    device: &Device,
    values: Values<'_>,
    function: &'static str,
    reduce: fn(&Device, &[T]) -> Result<T>,
) -> Result<Value> {
    match T::values(values) {
        Some(v) => reduce(device, v).map(T::wrap),
        None => {
            Err(Error::ColumnType { function, param: "values", expected: T::KIND.name(), found: values.kind().name() })
        }
    }
}

/// One argument of a call: a column in host memory, a column in a device's memory (read
/// in place by a call on that device; a call on another device is
/// `Error::DeviceMismatch`), or one value for every row (broadcast as the function's
/// scalars are, never expanded).
#[derive(Copy, Clone, Debug)]
pub enum ColumnArg<'a> {
    Column(Values<'a>),
    Device(DeviceValues<'a>),
    Scalar(Value),
}

impl ColumnArg<'_> {
    pub fn kind(&self) -> Kind {
        match self {
            ColumnArg::Column(v) => v.kind(),
            ColumnArg::Device(v) => v.kind(),
            ColumnArg::Scalar(v) => v.kind(),
        }
    }
}

/// The arguments of a function whose parameters are all [`ColumnType`]s: a tuple of
/// [`ArgRef`]s, bound from [`ColumnArg`]s.
pub trait ColumnArgs<'a>: Sized {
    /// The parameters' types.
    const KINDS: &'static [Kind];
    /// The arguments, or the index of the first whose type is not the parameter's (also
    /// for a wrong number of arguments: the index past the shorter list).
    fn bind(args: &[ColumnArg<'a>]) -> Result<Self, usize>;
}

fn bind_one<'a, T: ColumnType>(args: &[ColumnArg<'a>], i: usize) -> Result<ArgRef<'a, T>, usize> {
    match args.get(i) {
        Some(ColumnArg::Column(v)) => T::values(*v).map(ArgRef::Host).ok_or(i),
        Some(ColumnArg::Device(v)) => T::device_values(*v).map(ArgRef::Device).ok_or(i),
        Some(ColumnArg::Scalar(v)) => T::value(*v).map(ArgRef::Scalar).ok_or(i),
        None => Err(i),
    }
}

/// The results of a function whose results are all [`ColumnType`]s: one column each.
pub trait ColumnResults: Results {
    /// The results' types, one per output.
    const KINDS: &'static [Kind];
    /// Whether the result is a tuple (of one field or more).
    const TUPLE: bool;
    fn columns(host: Self::Host) -> Vec<Column>;
    /// The outputs of `into`, from one column per result; else the index of the first of
    /// another type (or where the count differs).
    fn outs(outs: Vec<ValuesMut<'_>>) -> Result<Self::Outs<'_>, usize>;
}

macro_rules! tuples {
    ($(($($t:ident $i:tt),+))*) => {$(
        impl<'a, $($t: ColumnType),+> ColumnArgs<'a> for ($(ArgRef<'a, $t>,)+) {
            const KINDS: &'static [Kind] = &[$($t::KIND),+];
            fn bind(args: &[ColumnArg<'a>]) -> Result<Self, usize> {
                let n = [$($i),+].len();
                if args.len() != n {
                    return Err(args.len().min(n));
                }
                Ok(($(bind_one::<$t>(args, $i)?,)+))
            }
        }
    )*};
}

tuples! {
    (A 0)
    (A 0, B 1)
    (A 0, B 1, C 2)
    (A 0, B 1, C 2, D 3)
    (A 0, B 1, C 2, D 3, E 4)
    (A 0, B 1, C 2, D 3, E 4, F 5)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11)
}

impl<'a> ColumnArgs<'a> for () {
    const KINDS: &'static [Kind] = &[];
    fn bind(args: &[ColumnArg<'a>]) -> Result<(), usize> {
        if args.is_empty() { Ok(()) } else { Err(0) }
    }
}

macro_rules! result_tuples {
    ($(($($t:ident $v:ident),+))*) => {$(
        impl<$($t: ColumnType),+> ColumnResults for ($($t,)+)
        where
            ($($t,)+): Results<Host = ($(Vec<$t>,)+)>,
            for<'o> ($($t,)+): Results<Outs<'o> = ($(OutRef<'o, $t>,)+)>,
        {
            const KINDS: &'static [Kind] = &[$($t::KIND),+];
            const TUPLE: bool = true;
            fn columns(($($v,)+): ($(Vec<$t>,)+)) -> Vec<Column> {
                vec![$($t::column($v)),+]
            }
            fn outs(outs: Vec<ValuesMut<'_>>) -> Result<Self::Outs<'_>, usize> {
                let n = outs.len();
                let mut outs = outs.into_iter();
                let mut k = 0;
                let out = ($({
                    let v = outs.next().ok_or(k)?;
                    let $v = $t::values_mut(v).map(OutRef::Host).ok_or(k)?;
                    k += 1;
                    $v
                },)+);
                if n != k {
                    return Err(k);
                }
                Ok(out)
            }
        }
    )*};
}

result_tuples! {
    (A a)
    (A a, B b)
    (A a, B b, C c)
    (A a, B b, C c, D d)
    (A a, B b, C c, D d, E e)
    (A a, B b, C c, D d, E e, F f)
}

/// One compiled vectorized function, called over columns.
pub trait ColumnFn: Send + Sync + 'static {
    /// The function's name.
    fn name(&self) -> &'static str;
    /// Its parameters' names, in order.
    fn params(&self) -> &'static [&'static str];
    /// Its parameters' types.
    fn param_kinds(&self) -> &'static [Kind];
    /// Its results' types: one, or one per field of a tuple result.
    fn result_kinds(&self) -> &'static [Kind];
    /// Whether the function returns a tuple (one column per field).
    fn returns_tuple(&self) -> bool;
    /// The function over `args` on `device` (a GPU, or `Device::cpu()`): one column per
    /// result, as long as the columns among the arguments (one row where every argument is
    /// a scalar). Columns of different lengths are `Error::LengthMismatch`; an argument
    /// of another type than its parameter's is `Error::ColumnType`; a fault is
    /// `Error::KernelFault` with the row's index.
    fn call(&self, device: &Device, args: &[ColumnArg<'_>]) -> Result<Vec<Column>>;
    /// As [`ColumnFn::call`], writing each result into `outs` (one column per result, each
    /// as long as the call; page-locked memory, `gpu_runtime::PageLocked`, takes a GPU's
    /// results without a staging copy). An output of another type or length is an error,
    /// and after a fault the outputs are as they were.
    fn call_into(&self, device: &Device, args: &[ColumnArg<'_>], outs: Vec<ValuesMut<'_>>) -> Result<()>;
    /// Whether the function is a reduction (`fn(T, T) -> T`, which has `reduce`).
    fn reducible(&self) -> bool;
    /// For a reduction, its fold over `values` on `device` (as `name::reduce_on`): an empty
    /// column gives the `identity`, or `Error::EmptyReduce` without one. `None` for other
    /// functions.
    fn reduce(&self, device: &Device, values: Values<'_>) -> Option<Result<Value>>;
}

/// The [`ColumnFn`] of the vectorized function whose generated type is `F`.
pub struct Columns<F> {
    reduce: Option<ReduceFn>,
    function: PhantomData<fn() -> F>,
}

impl<F> Columns<F> {
    /// For the generated `COLUMNAR` constants.
    #[doc(hidden)]
    pub const NEW: Columns<F> = Columns { reduce: None, function: PhantomData };

    /// For the generated `COLUMNAR` constants of reductions.
    #[doc(hidden)]
    pub const fn reducing(reduce: ReduceFn) -> Columns<F> {
        Columns { reduce: Some(reduce), function: PhantomData }
    }
}

impl<F> ColumnFn for Columns<F>
where
    F: GpuFn,
    for<'a> F::Args<'a>: ColumnArgs<'a>,
    F::Ret: ColumnResults,
{
    fn name(&self) -> &'static str {
        F::NAME
    }

    fn params(&self) -> &'static [&'static str] {
        F::PARAMS
    }

    fn param_kinds(&self) -> &'static [Kind] {
        <F::Args<'static> as ColumnArgs<'static>>::KINDS
    }

    fn result_kinds(&self) -> &'static [Kind] {
        <F::Ret as ColumnResults>::KINDS
    }

    fn returns_tuple(&self) -> bool {
        <F::Ret as ColumnResults>::TUPLE
    }

    fn call(&self, device: &Device, args: &[ColumnArg<'_>]) -> Result<Vec<Column>> {
        Ok(<F::Ret as ColumnResults>::columns(on::<F>(device, self.bind(args)?)?))
    }

    fn call_into(&self, device: &Device, args: &[ColumnArg<'_>], outs: Vec<ValuesMut<'_>>) -> Result<()> {
        let found: Vec<Kind> = outs.iter().map(ValuesMut::kind).collect();
        let outs = <F::Ret as ColumnResults>::outs(outs).map_err(|k| Error::ColumnType {
            function: F::NAME,
            param: "(result)",
            expected: self.result_kinds().get(k).map_or("no result", |r| r.name()),
            found: found.get(k).map_or("no result", |f| f.name()),
        })?;
        into_on::<F>(device, outs, self.bind(args)?)
    }

    fn reducible(&self) -> bool {
        self.reduce.is_some()
    }

    fn reduce(&self, device: &Device, values: Values<'_>) -> Option<Result<Value>> {
        self.reduce.map(|r| r(device, values))
    }
}

impl<F> Columns<F>
where
    F: GpuFn,
    for<'a> F::Args<'a>: ColumnArgs<'a>,
{
    /// The arguments bound to the function's parameters, or the error naming the first
    /// that does not fit.
    fn bind<'a>(&self, args: &[ColumnArg<'a>]) -> Result<F::Args<'a>> {
        <F::Args<'a> as ColumnArgs<'a>>::bind(args).map_err(|i| {
            let expected = <F::Args<'a> as ColumnArgs<'a>>::KINDS.get(i).map_or("no argument", |k| k.name());
            let found = args.get(i).map_or("no argument", |a| a.kind().name());
            let param = F::PARAMS.get(i).copied().unwrap_or("(extra argument)");
            Error::ColumnType { function: F::NAME, param, expected, found }
        })
    }
}

/// A vectorized function's [`ColumnFn`]s: one, or one per type of `types(…)`, in order.
#[derive(Copy, Clone)]
pub struct Columnar {
    functions: &'static [&'static dyn ColumnFn],
}

impl Columnar {
    /// For the generated `COLUMNAR` constants.
    #[doc(hidden)]
    pub const fn new(functions: &'static [&'static dyn ColumnFn]) -> Columnar {
        Columnar { functions }
    }

    /// The instances, in the order of `types(…)`.
    pub fn functions(&self) -> &'static [&'static dyn ColumnFn] {
        self.functions
    }

    /// The function's name.
    pub fn name(&self) -> &'static str {
        self.functions.first().map_or("", |f| f.name())
    }

    /// Whether the function is a reduction (`fn(T, T) -> T` with `reduce`).
    pub fn reducible(&self) -> bool {
        self.functions.iter().all(|f| f.reducible()) && !self.functions.is_empty()
    }

    /// The instance whose parameters have the types `kinds`.
    pub fn instance(&self, kinds: &[Kind]) -> Option<&'static dyn ColumnFn> {
        self.functions.iter().copied().find(|f| f.param_kinds() == kinds)
    }
}

impl std::fmt::Debug for Columnar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sigs: Vec<String> = self
            .functions
            .iter()
            .map(|c| {
                let p: Vec<&str> = c.param_kinds().iter().map(|k| k.name()).collect();
                let r: Vec<&str> = c.result_kinds().iter().map(|k| k.name()).collect();
                format!("({}) -> ({})", p.join(", "), r.join(", "))
            })
            .collect();
        write!(f, "Columnar {{ {}: {} }}", self.name(), sigs.join(" | "))
    }
}
