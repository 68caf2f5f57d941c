//! Arrow's types and arrays against `gpu_runtime::columnar`'s.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, BooleanArray, PrimitiveArray};
use datafusion::arrow::buffer::{BooleanBuffer, NullBuffer};
use datafusion::arrow::datatypes::{
    DataType, Float16Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type,
    UInt32Type, UInt64Type,
};
use datafusion::common::{Result, ScalarValue, exec_err};
use gpu_runtime::columnar::{Column, Kind, Value, Values};

/// The Arrow type of a column type.
pub fn data_type(k: Kind) -> DataType {
    match k {
        Kind::Bool => DataType::Boolean,
        Kind::I8 => DataType::Int8,
        Kind::I16 => DataType::Int16,
        Kind::I32 => DataType::Int32,
        Kind::I64 => DataType::Int64,
        Kind::U8 => DataType::UInt8,
        Kind::U16 => DataType::UInt16,
        Kind::U32 => DataType::UInt32,
        Kind::U64 => DataType::UInt64,
        Kind::F16 => DataType::Float16,
        Kind::F32 => DataType::Float32,
        Kind::F64 => DataType::Float64,
    }
}

/// The column type of an Arrow type (`None` for the types no function takes).
pub fn kind_of(t: &DataType) -> Option<Kind> {
    Some(match t {
        DataType::Boolean => Kind::Bool,
        DataType::Int8 => Kind::I8,
        DataType::Int16 => Kind::I16,
        DataType::Int32 => Kind::I32,
        DataType::Int64 => Kind::I64,
        DataType::UInt8 => Kind::U8,
        DataType::UInt16 => Kind::U16,
        DataType::UInt32 => Kind::U32,
        DataType::UInt64 => Kind::U64,
        DataType::Float16 => Kind::F16,
        DataType::Float32 => Kind::F32,
        DataType::Float64 => Kind::F64,
        _ => return None,
    })
}

/// Whether SQL's argument type `from` goes to the parameter type `to` without losing
/// anything: itself, a null, an integer to a float or to a wider integer that holds all its
/// values, a float to a wider float.
pub fn coerces(from: &DataType, to: Kind) -> bool {
    let Some(k) = kind_of(from) else { return *from == DataType::Null };
    let int = |k: Kind| -> Option<(bool, u32)> {
        Some(match k {
            Kind::I8 => (true, 8),
            Kind::I16 => (true, 16),
            Kind::I32 => (true, 32),
            Kind::I64 => (true, 64),
            Kind::U8 => (false, 8),
            Kind::U16 => (false, 16),
            Kind::U32 => (false, 32),
            Kind::U64 => (false, 64),
            _ => return None,
        })
    };
    let float = |k: Kind| match k {
        Kind::F16 => Some(16),
        Kind::F32 => Some(32),
        Kind::F64 => Some(64),
        _ => None,
    };
    if k == to {
        return true;
    }
    match (int(k), int(to), float(k), float(to)) {
        // A wider integer of the same signedness, or a signed one wider than an unsigned.
        (Some((fs, fw)), Some((ts, tw)), _, _) => (fs == ts && tw > fw) || (!fs && ts && tw > fw),
        // SQL's usual promotion of integers to floats (as `x + 1.5` does).
        (Some(_), None, _, Some(tw)) => tw >= 32,
        (None, None, Some(fw), Some(tw)) => tw > fw,
        _ => false,
    }
}

/// The values of an array with no nulls, borrowed in place (booleans unpacked).
pub enum Held<'a> {
    Borrowed(Values<'a>),
    Owned(Column),
}

impl Held<'_> {
    pub fn values(&self) -> Values<'_> {
        match self {
            Held::Borrowed(v) => *v,
            Held::Owned(c) => c.values(),
        }
    }
}

/// An array's values: in place, or unpacked booleans. `None` for a type no function takes.
pub fn values(array: &dyn Array) -> Option<Held<'_>> {
    Some(match array.data_type() {
        DataType::Boolean => {
            let b = array.as_boolean();
            Held::Owned(Column::Bool(b.values().iter().collect()))
        }
        DataType::Int8 => Held::Borrowed(Values::I8(array.as_primitive::<Int8Type>().values())),
        DataType::Int16 => Held::Borrowed(Values::I16(array.as_primitive::<Int16Type>().values())),
        DataType::Int32 => Held::Borrowed(Values::I32(array.as_primitive::<Int32Type>().values())),
        DataType::Int64 => Held::Borrowed(Values::I64(array.as_primitive::<Int64Type>().values())),
        DataType::UInt8 => Held::Borrowed(Values::U8(array.as_primitive::<UInt8Type>().values())),
        DataType::UInt16 => Held::Borrowed(Values::U16(array.as_primitive::<UInt16Type>().values())),
        DataType::UInt32 => Held::Borrowed(Values::U32(array.as_primitive::<UInt32Type>().values())),
        DataType::UInt64 => Held::Borrowed(Values::U64(array.as_primitive::<UInt64Type>().values())),
        DataType::Float16 => Held::Borrowed(Values::F16(array.as_primitive::<Float16Type>().values())),
        DataType::Float32 => Held::Borrowed(Values::F32(array.as_primitive::<Float32Type>().values())),
        DataType::Float64 => Held::Borrowed(Values::F64(array.as_primitive::<Float64Type>().values())),
        _ => return None,
    })
}

/// `array`'s values at `rows`: all of them in place for `None`, else those rows gathered
/// (the rows where no argument is null).
pub fn held_rows<'a>(function: &str, array: &'a dyn Array, rows: Option<&[usize]>) -> Result<Held<'a>> {
    let Some(held) = values(array) else {
        return exec_err!("`{function}`: no column type: {}", array.data_type());
    };
    match rows {
        None => Ok(held),
        Some(rows) => match held.values().take(rows) {
            Some(c) => Ok(Held::Owned(c)),
            None => exec_err!("`{function}`: a row past the array's {} rows", array.len()),
        },
    }
}

/// A non-null scalar's value (`None` for a null or a type no function takes).
pub fn value(s: &ScalarValue) -> Option<Value> {
    Some(match s {
        ScalarValue::Boolean(Some(x)) => Value::Bool(*x),
        ScalarValue::Int8(Some(x)) => Value::I8(*x),
        ScalarValue::Int16(Some(x)) => Value::I16(*x),
        ScalarValue::Int32(Some(x)) => Value::I32(*x),
        ScalarValue::Int64(Some(x)) => Value::I64(*x),
        ScalarValue::UInt8(Some(x)) => Value::U8(*x),
        ScalarValue::UInt16(Some(x)) => Value::U16(*x),
        ScalarValue::UInt32(Some(x)) => Value::U32(*x),
        ScalarValue::UInt64(Some(x)) => Value::U64(*x),
        ScalarValue::Float16(Some(x)) => Value::F16(*x),
        ScalarValue::Float32(Some(x)) => Value::F32(*x),
        ScalarValue::Float64(Some(x)) => Value::F64(*x),
        _ => return None,
    })
}

/// A result column as an Arrow array with the validity `nulls`.
pub fn array(c: Column, nulls: Option<NullBuffer>) -> ArrayRef {
    match c {
        Column::Bool(v) => Arc::new(BooleanArray::new(BooleanBuffer::from(v), nulls)),
        Column::I8(v) => Arc::new(PrimitiveArray::<Int8Type>::new(v.into(), nulls)),
        Column::I16(v) => Arc::new(PrimitiveArray::<Int16Type>::new(v.into(), nulls)),
        Column::I32(v) => Arc::new(PrimitiveArray::<Int32Type>::new(v.into(), nulls)),
        Column::I64(v) => Arc::new(PrimitiveArray::<Int64Type>::new(v.into(), nulls)),
        Column::U8(v) => Arc::new(PrimitiveArray::<UInt8Type>::new(v.into(), nulls)),
        Column::U16(v) => Arc::new(PrimitiveArray::<UInt16Type>::new(v.into(), nulls)),
        Column::U32(v) => Arc::new(PrimitiveArray::<UInt32Type>::new(v.into(), nulls)),
        Column::U64(v) => Arc::new(PrimitiveArray::<UInt64Type>::new(v.into(), nulls)),
        Column::F16(v) => Arc::new(PrimitiveArray::<Float16Type>::new(v.into(), nulls)),
        Column::F32(v) => Arc::new(PrimitiveArray::<Float32Type>::new(v.into(), nulls)),
        Column::F64(v) => Arc::new(PrimitiveArray::<Float64Type>::new(v.into(), nulls)),
    }
}

/// A value as DataFusion's scalar.
pub fn scalar(v: Value) -> ScalarValue {
    match v {
        Value::Bool(x) => ScalarValue::Boolean(Some(x)),
        Value::I8(x) => ScalarValue::Int8(Some(x)),
        Value::I16(x) => ScalarValue::Int16(Some(x)),
        Value::I32(x) => ScalarValue::Int32(Some(x)),
        Value::I64(x) => ScalarValue::Int64(Some(x)),
        Value::U8(x) => ScalarValue::UInt8(Some(x)),
        Value::U16(x) => ScalarValue::UInt16(Some(x)),
        Value::U32(x) => ScalarValue::UInt32(Some(x)),
        Value::U64(x) => ScalarValue::UInt64(Some(x)),
        Value::F16(x) => ScalarValue::Float16(Some(x)),
        Value::F32(x) => ScalarValue::Float32(Some(x)),
        Value::F64(x) => ScalarValue::Float64(Some(x)),
    }
}
