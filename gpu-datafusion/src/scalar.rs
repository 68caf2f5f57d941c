//! A vectorized function as a DataFusion scalar UDF.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, StructArray, new_null_array};
use datafusion::arrow::buffer::NullBuffer;
use datafusion::arrow::datatypes::{DataType, Field, Fields};
use datafusion::common::{DataFusionError, Result, ScalarValue, exec_err, plan_err};
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility};
use gpu_runtime::columnar::{ColumnArg, ColumnFn, Columnar, Kind};
use gpu_runtime::{Device, Error};

use crate::mirror::{Resident, resident};
use crate::pinned::{self, Pooled};
use crate::types::{Held, array, coerces, data_type, held_rows, kind_of, value};

/// A vectorized function as a scalar UDF: its name is the function's, and it runs on one
/// device.
pub struct GpuScalarUdf {
    columnar: Columnar,
    device: Device,
    signature: Signature,
}

/// The UDF of `f` (a function's `COLUMNAR`), on [`Device::best`]: the default GPU, or the
/// CPU device on a machine without one (with one `tracing` line saying so), which computes
/// the same results.
pub fn scalar_udf(f: Columnar) -> ScalarUDF {
    scalar_udf_on(f, &best_device(f.name()))
}

/// [`Device::best`], or the CPU device where a GPU fails to start; one `tracing` line when
/// the function runs on the CPU.
pub(crate) fn best_device(function: &str) -> Device {
    let device = match Device::best() {
        Ok(d) => d,
        Err(e) => {
            tracing::warn!(function, error = %e, "no usable GPU: the SQL function runs on the CPU device");
            return Device::cpu();
        }
    };
    if device.is_cpu() {
        tracing::info!(function, "no GPU found: the SQL function runs on the CPU device");
    }
    device
}

/// Whether two `COLUMNAR`s are the same function's.
pub(crate) fn same_functions(a: &Columnar, b: &Columnar) -> bool {
    let fns = |c: &Columnar| c.functions().iter().map(|f| std::ptr::from_ref(*f).cast::<()>()).collect::<Vec<_>>();
    fns(a) == fns(b)
}

/// The UDF of `f` on `device` (a GPU, or `Device::cpu()`).
pub fn scalar_udf_on(f: Columnar, device: &Device) -> ScalarUDF {
    ScalarUDF::new_from_impl(GpuScalarUdf {
        columnar: f,
        device: device.clone(),
        signature: Signature::user_defined(Volatility::Immutable),
    })
}

impl GpuScalarUdf {
    /// The instance whose parameters are the Arrow types `types` exactly.
    fn instance(&self, types: &[DataType]) -> Option<&'static dyn ColumnFn> {
        let kinds: Option<Vec<Kind>> = types.iter().map(kind_of).collect();
        self.columnar.instance(&kinds?)
    }

    /// The signatures, for messages: `(f32, f32) or (f64, f64)`.
    fn takes(&self) -> String {
        let sigs: Vec<String> = self
            .columnar
            .functions()
            .iter()
            .map(|f| {
                let p: Vec<&str> = f.param_kinds().iter().map(|k| k.name()).collect();
                format!("({})", p.join(", "))
            })
            .collect();
        sigs.join(" or ")
    }
}

/// The result type of `f`: its one result's, or a struct of its tuple's fields `"0"`, `"1"`, ….
fn result_type(f: &dyn ColumnFn) -> DataType {
    let kinds = f.result_kinds();
    if !f.returns_tuple() {
        return data_type(kinds[0]);
    }
    DataType::Struct(fields(f))
}

fn fields(f: &dyn ColumnFn) -> Fields {
    f.result_kinds().iter().enumerate().map(|(i, k)| Field::new(i.to_string(), data_type(*k), true)).collect()
}

impl GpuScalarUdf {
    /// The call's results written by the GPU straight into page-locked buffers, as Arrow
    /// arrays over them with the validity `nulls`; `None` where a result is a `bool`
    /// (which Arrow packs into bits).
    fn call_page_locked(
        &self,
        f: &dyn ColumnFn,
        args: &[ColumnArg<'_>],
        rows: usize,
        nulls: Option<NullBuffer>,
    ) -> Result<Option<Vec<ArrayRef>>> {
        let kinds = f.result_kinds();
        if kinds.contains(&Kind::Bool) {
            return Ok(None);
        }
        let name = self.name();
        let mut buffers = kinds
            .iter()
            .map(|k| Pooled::take(&self.device, rows.saturating_mul(k.size())))
            .collect::<gpu_runtime::Result<Vec<_>>>()
            .map_err(|e| error(name, e, None))?;
        let outs = buffers
            .iter_mut()
            .zip(kinds)
            .map(|(b, k)| b.column_mut(*k, rows))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| DataFusionError::Internal(format!("`{name}`: a result buffer too short")))?;
        f.call_into(&self.device, args, outs).map_err(|e| error(name, e, None))?;
        let arrays = buffers
            .into_iter()
            .zip(kinds)
            .map(|(b, k)| b.into_array(*k, rows, nulls.clone()))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| DataFusionError::Internal(format!("`{name}`: a result buffer too short")))?;
        Ok(Some(arrays))
    }
}

impl std::fmt::Debug for GpuScalarUdf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuScalarUdf").field("function", &self.columnar).field("device", &self.device.name()).finish()
    }
}

impl PartialEq for GpuScalarUdf {
    fn eq(&self, other: &Self) -> bool {
        same_functions(&self.columnar, &other.columnar) && self.device.id() == other.device.id()
    }
}

impl Eq for GpuScalarUdf {}

impl Hash for GpuScalarUdf {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.columnar.name().hash(state);
        self.device.id().hash(state);
    }
}

impl ScalarUDFImpl for GpuScalarUdf {
    fn name(&self) -> &str {
        self.columnar.name()
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        let fits = |f: &&dyn ColumnFn| {
            f.param_kinds().len() == arg_types.len()
                && f.param_kinds().iter().zip(arg_types).all(|(k, t)| coerces(t, *k))
        };
        // The exact instance first, then the first one every argument goes to.
        match self.instance(arg_types).or_else(|| self.columnar.functions().iter().copied().find(|f| fits(f))) {
            Some(f) => Ok(f.param_kinds().iter().map(|k| data_type(*k)).collect()),
            None => {
                let given: Vec<String> = arg_types.iter().map(|t| t.to_string()).collect();
                plan_err!("`{}` takes {}, not ({})", self.name(), self.takes(), given.join(", "))
            }
        }
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        match self.instance(arg_types) {
            Some(f) => Ok(result_type(f)),
            None => plan_err!("`{}` takes {}", self.name(), self.takes()),
        }
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let types: Vec<DataType> = args.args.iter().map(|a| a.data_type()).collect();
        let Some(f) = self.instance(&types) else {
            return exec_err!("`{}` takes {}, not {types:?}", self.name(), self.takes());
        };
        let all_scalars = args.args.iter().all(|a| matches!(a, ColumnarValue::Scalar(_)));
        let rows = if all_scalars { 1 } else { args.number_rows };
        // The rows where every argument is valid.
        let mut nulls: Option<NullBuffer> = None;
        let mut a_null_scalar = false;
        for a in &args.args {
            match a {
                ColumnarValue::Array(arr) => nulls = NullBuffer::union(nulls.as_ref(), arr.logical_nulls().as_ref()),
                ColumnarValue::Scalar(s) => a_null_scalar |= s.is_null(),
            }
        }
        let ty = result_type(f);
        if a_null_scalar || nulls.as_ref().is_some_and(|n| n.null_count() == rows) {
            return finish(new_null_array(&ty, rows), all_scalars);
        }
        let valid: Option<Vec<usize>> =
            nulls.as_ref().filter(|n| n.null_count() > 0).map(|n| n.valid_indices().collect());
        // The arguments: arrays a mirror holds on the device read there, other arrays in
        // place (or their valid rows gathered), scalars as values.
        let mut held: Vec<Option<Arg<'_>>> = Vec::with_capacity(args.args.len());
        for a in &args.args {
            held.push(match a {
                ColumnarValue::Array(arr) => {
                    Some(match valid.is_none().then(|| resident(&self.device, arr.as_ref())).flatten() {
                        Some(r) => Arg::Resident(r),
                        None => Arg::Host(held_rows(self.name(), arr.as_ref(), valid.as_deref())?),
                    })
                }
                ColumnarValue::Scalar(_) => None,
            });
        }
        let column_args: Vec<ColumnArg<'_>> = args
            .args
            .iter()
            .zip(&held)
            .map(|(a, h)| match (a, h) {
                (_, Some(Arg::Host(h))) => Ok(ColumnArg::Column(h.values())),
                (_, Some(Arg::Resident(r))) => {
                    r.values().map(ColumnArg::Device).map_err(|e| error(self.name(), e, None))
                }
                (ColumnarValue::Scalar(s), None) => value(s)
                    .map(ColumnArg::Scalar)
                    .ok_or_else(|| DataFusionError::Execution(format!("`{}`: no column type: {s:?}", self.name()))),
                (ColumnarValue::Array(_), None) => unreachable!("every array is held"),
            })
            .collect::<Result<_>>()?;
        if valid.is_none() && self.device.is_cuda() && rows >= pinned::MIN_ROWS {
            if let Some(arrays) = self.call_page_locked(f, &column_args, rows, nulls.clone())? {
                let out: ArrayRef = match f.returns_tuple() {
                    true => Arc::new(StructArray::try_new(fields(f), arrays, nulls)?),
                    false => arrays
                        .into_iter()
                        .next()
                        .ok_or_else(|| DataFusionError::Internal(format!("`{}` gave no result", self.name())))?,
                };
                return finish(out, all_scalars);
            }
        }
        let columns = f.call(&self.device, &column_args).map_err(|e| error(self.name(), e, valid.as_deref()))?;
        let columns = match &valid {
            None => columns,
            Some(rows_of) => columns
                .iter()
                .map(|c| c.scatter(rows_of, rows))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| DataFusionError::Internal(format!("`{}`: results of another length", self.name())))?,
        };
        let out: ArrayRef = if f.returns_tuple() {
            let arrays: Vec<ArrayRef> = columns.into_iter().map(|c| array(c, nulls.clone())).collect();
            Arc::new(StructArray::try_new(fields(f), arrays, nulls)?)
        } else {
            let Some(c) = columns.into_iter().next() else {
                return exec_err!("`{}` gave no result", self.name());
            };
            array(c, nulls)
        };
        finish(out, all_scalars)
    }
}

/// An array argument: its values on the host, or a mirror's copy on the UDF's device.
enum Arg<'a> {
    Host(Held<'a>),
    Resident(Resident),
}

/// `out` as the call's value: a scalar where every argument was one.
fn finish(out: ArrayRef, all_scalars: bool) -> Result<ColumnarValue> {
    if all_scalars {
        Ok(ColumnarValue::Scalar(ScalarValue::try_from_array(&out, 0)?))
    } else {
        Ok(ColumnarValue::Array(out))
    }
}

/// The runtime's error as DataFusion's: a fault names the row within the batch (`rows` maps
/// the call's elements to the batch's rows where null rows were left out).
fn error(function: &str, e: Error, rows: Option<&[usize]>) -> DataFusionError {
    match e {
        Error::KernelFault { index, message, .. } => {
            let row = usize::try_from(index).ok().map(|i| rows.map_or(Some(i), |r| r.get(i).copied()));
            match row.flatten() {
                Some(row) => {
                    DataFusionError::Execution(format!("`{function}` failed at row {row} of the batch: {message}"))
                }
                None => DataFusionError::Execution(format!("`{function}` failed: {message}")),
            }
        }
        e => DataFusionError::External(Box::new(e)),
    }
}
