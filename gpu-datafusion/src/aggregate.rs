//! A reducible vectorized function (`fn(T, T) -> T`) as a DataFusion aggregate UDF.

use std::hash::{Hash, Hasher};

use datafusion::arrow::array::{Array, ArrayRef};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{DataFusionError, Result, ScalarValue, exec_err, plan_err};
use datafusion::logical_expr::function::AccumulatorArgs;
use datafusion::logical_expr::{Accumulator, AggregateUDF, AggregateUDFImpl, Signature, Volatility};
use gpu_runtime::columnar::{ColumnArg, ColumnFn, Columnar, Value};
use gpu_runtime::{Device, Error};

use crate::types::{coerces, data_type, held_rows, kind_of, scalar};

/// A reduction as an aggregate UDF: each batch (each group's rows of it) is folded on the
/// UDF's device with the function's `reduce`; the partial results (of batches, and of
/// partitions in `merge_batch`) are combined on the host with the function itself.
pub struct GpuAggregateUdf {
    columnar: Columnar,
    device: Device,
    signature: Signature,
}

/// The aggregate UDF of a reducible function's `COLUMNAR` (`fn(T, T) -> T`), on
/// [`Device::best`]; a planning error for another function.
pub fn aggregate_udf(f: Columnar) -> Result<AggregateUDF> {
    aggregate_udf_on(f, &crate::scalar::best_device(f.name()))
}

/// The aggregate UDF of `f` on `device`.
pub fn aggregate_udf_on(f: Columnar, device: &Device) -> Result<AggregateUDF> {
    if !f.reducible() {
        return plan_err!(
            "`{}` is no reduction: an aggregate function is a `fn(T, T) -> T` (which has `reduce`)",
            f.name()
        );
    }
    Ok(AggregateUDF::new_from_impl(GpuAggregateUdf {
        columnar: f,
        device: device.clone(),
        signature: Signature::user_defined(Volatility::Immutable),
    }))
}

impl GpuAggregateUdf {
    /// The instance over values of type `t`.
    fn instance(&self, t: &DataType) -> Option<&'static dyn ColumnFn> {
        let k = kind_of(t)?;
        self.columnar.instance(&[k, k])
    }

    fn takes(&self) -> String {
        let types: Vec<&str> = self.columnar.functions().iter().map(|f| f.result_kinds()[0].name()).collect();
        types.join(" or ")
    }
}

impl std::fmt::Debug for GpuAggregateUdf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuAggregateUdf")
            .field("function", &self.columnar)
            .field("device", &self.device.name())
            .finish()
    }
}

impl PartialEq for GpuAggregateUdf {
    fn eq(&self, other: &Self) -> bool {
        crate::scalar::same_functions(&self.columnar, &other.columnar) && self.device.id() == other.device.id()
    }
}

impl Eq for GpuAggregateUdf {}

impl Hash for GpuAggregateUdf {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.columnar.name().hash(state);
        self.device.id().hash(state);
    }
}

impl AggregateUDFImpl for GpuAggregateUdf {
    fn name(&self) -> &str {
        self.columnar.name()
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        let found = match arg_types {
            [t] => self
                .instance(t)
                .or_else(|| self.columnar.functions().iter().copied().find(|f| coerces(t, f.result_kinds()[0]))),
            _ => None,
        };
        match found {
            Some(f) => Ok(vec![data_type(f.result_kinds()[0])]),
            None => {
                let given: Vec<String> = arg_types.iter().map(|t| t.to_string()).collect();
                plan_err!("`{}` aggregates one column of {}, not ({})", self.name(), self.takes(), given.join(", "))
            }
        }
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        match arg_types {
            [t] if self.instance(t).is_some() => Ok(t.clone()),
            _ => plan_err!("`{}` aggregates one column of {}", self.name(), self.takes()),
        }
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        let t = args.return_field.data_type();
        let Some(f) = self.instance(t) else {
            return exec_err!("`{}` aggregates one column of {}, not {t}", self.name(), self.takes());
        };
        Ok(Box::new(GpuAccumulator { f, device: self.device.clone(), ty: t.clone(), state: None }))
    }
}

/// One group's fold so far (`None` before its first non-null value).
struct GpuAccumulator {
    f: &'static dyn ColumnFn,
    device: Device,
    ty: DataType,
    state: Option<Value>,
}

impl std::fmt::Debug for GpuAccumulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuAccumulator").field("function", &self.f.name()).field("state", &self.state).finish()
    }
}

impl GpuAccumulator {
    /// Folds the non-null values of `array` into the state.
    fn fold(&mut self, array: &ArrayRef) -> Result<()> {
        if array.null_count() == array.len() {
            return Ok(());
        }
        let rows: Option<Vec<usize>> =
            array.logical_nulls().filter(|n| n.null_count() > 0).map(|n| n.valid_indices().collect());
        let held = held_rows(self.f.name(), array.as_ref(), rows.as_deref())?;
        let Some(folded) = self.f.reduce(&self.device, held.values()) else {
            return exec_err!("`{}` is no reduction", self.f.name());
        };
        let folded = folded.map_err(|e| error(self.f.name(), e))?;
        self.state = Some(match self.state {
            None => folded,
            Some(s) => self.combine(s, folded)?,
        });
        Ok(())
    }

    /// `f(a, b)` on the host (the CPU device computes what the GPU does).
    fn combine(&self, a: Value, b: Value) -> Result<Value> {
        let out = self
            .f
            .call(&Device::cpu(), &[ColumnArg::Scalar(a), ColumnArg::Scalar(b)])
            .map_err(|e| error(self.f.name(), e))?;
        out.first()
            .and_then(|c| c.get(0))
            .ok_or_else(|| DataFusionError::Internal(format!("`{}` gave no value", self.f.name())))
    }
}

fn error(function: &str, e: Error) -> DataFusionError {
    match e {
        Error::KernelFault { message, .. } => DataFusionError::Execution(format!("`{function}` failed: {message}")),
        e => DataFusionError::External(Box::new(e)),
    }
}

impl Accumulator for GpuAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        match values {
            [v] => self.fold(v),
            _ => exec_err!("`{}` aggregates one column", self.f.name()),
        }
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        self.update_batch(states)
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![self.evaluate()?])
    }

    /// The fold, or null where no row was non-null (SQL's aggregate of nothing).
    fn evaluate(&mut self) -> Result<ScalarValue> {
        match self.state {
            Some(v) => Ok(scalar(v)),
            None => ScalarValue::try_from(&self.ty),
        }
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self)
    }
}
