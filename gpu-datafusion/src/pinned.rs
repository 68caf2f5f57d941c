//! Result columns in page-locked memory: a GPU writes a batch's results straight into
//! them at the link's speed (pageable memory goes through the driver's staging buffers,
//! at a fraction of it), and Arrow reads them in place. The buffers are kept in a pool
//! and reused once Arrow lets go of them, since locking pages costs far more than the
//! copy it saves.

use std::ptr::NonNull;
use std::sync::{Arc, Mutex};

use datafusion::arrow::array::{ArrayRef, PrimitiveArray};
use datafusion::arrow::buffer::{Buffer, NullBuffer, ScalarBuffer};
use datafusion::arrow::datatypes::{
    ArrowPrimitiveType, Float16Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type,
    UInt16Type, UInt32Type, UInt64Type,
};
use gpu_runtime::columnar::{Kind, ValuesMut};
use gpu_runtime::{Device, DeviceId, PageLocked, Result};

/// Results of fewer rows go to ordinary memory: the driver's staging costs little there,
/// and the pool would hold many small buffers.
pub(crate) const MIN_ROWS: usize = 1 << 16;

/// The idle page-locked bytes the pool keeps; a buffer let go beyond that is freed.
const POOL_BYTES: usize = 1 << 30;

/// Idle buffers, with their device.
static POOL: Mutex<Vec<(DeviceId, PageLocked<u8>)>> = Mutex::new(Vec::new());

/// A page-locked buffer of the pool, back in it when dropped (by the last Arrow array
/// that reads it).
pub(crate) struct Pooled {
    memory: Option<PageLocked<u8>>,
    device: DeviceId,
}

impl Pooled {
    /// A buffer of at least `bytes` bytes (at most twice that, so that little is wasted)
    /// for `device`, from the pool or new.
    pub(crate) fn take(device: &Device, bytes: usize) -> Result<Pooled> {
        let id = device.id();
        let pooled = {
            let mut pool = POOL.lock().unwrap_or_else(|p| p.into_inner());
            let fits =
                |(d, m): &(DeviceId, PageLocked<u8>)| *d == id && m.len() >= bytes && m.len() <= 2 * bytes.max(1);
            pool.iter().position(fits).map(|k| pool.swap_remove(k).1)
        };
        let memory = match pooled {
            Some(m) => m,
            None => PageLocked::zeroed(device, bytes)?,
        };
        Ok(Pooled { memory: Some(memory), device: id })
    }

    /// The first `rows` values of type `kind`, to write (`None` for `Bool`).
    pub(crate) fn column_mut(&mut self, kind: Kind, rows: usize) -> Option<ValuesMut<'_>> {
        self.memory.as_mut()?.column_mut(kind, rows)
    }

    /// The buffer as the values of an Arrow array of `rows` rows of `kind` with the
    /// validity `nulls`, read in place (`None` for `Bool`, or rows past the buffer).
    pub(crate) fn into_array(self, kind: Kind, rows: usize, nulls: Option<NullBuffer>) -> Option<ArrayRef> {
        fn typed<T: ArrowPrimitiveType>(buffer: Buffer, rows: usize, nulls: Option<NullBuffer>) -> ArrayRef {
            Arc::new(PrimitiveArray::<T>::new(ScalarBuffer::new(buffer, 0, rows), nulls))
        }
        let memory = self.memory.as_ref()?;
        if kind == Kind::Bool {
            return None;
        }
        let bytes = rows.checked_mul(kind.size()).filter(|&b| b <= memory.len())?;
        let ptr = NonNull::new(memory.as_ptr().cast_mut())?;
        // SAFETY: `ptr` holds `bytes` initialised bytes (zeroed when allocated, then
        // written by the call), and the allocation given as the owner keeps them alive and
        // unmoved for as long as any array reads them; nothing writes them meanwhile (the
        // pool hands a buffer out again only once its owner is dropped).
        let buffer = unsafe { Buffer::from_custom_allocation(ptr, bytes, Arc::new(self)) };
        Some(match kind {
            Kind::I8 => typed::<Int8Type>(buffer, rows, nulls),
            Kind::I16 => typed::<Int16Type>(buffer, rows, nulls),
            Kind::I32 => typed::<Int32Type>(buffer, rows, nulls),
            Kind::I64 => typed::<Int64Type>(buffer, rows, nulls),
            Kind::U8 => typed::<UInt8Type>(buffer, rows, nulls),
            Kind::U16 => typed::<UInt16Type>(buffer, rows, nulls),
            Kind::U32 => typed::<UInt32Type>(buffer, rows, nulls),
            Kind::U64 => typed::<UInt64Type>(buffer, rows, nulls),
            Kind::F16 => typed::<Float16Type>(buffer, rows, nulls),
            Kind::F32 => typed::<Float32Type>(buffer, rows, nulls),
            Kind::F64 => typed::<Float64Type>(buffer, rows, nulls),
            Kind::Bool => return None,
        })
    }
}

impl Drop for Pooled {
    fn drop(&mut self) {
        let Some(memory) = self.memory.take() else { return };
        let mut pool = POOL.lock().unwrap_or_else(|p| p.into_inner());
        let idle: usize = pool.iter().map(|(_, m)| m.len()).sum();
        if idle + memory.len() <= POOL_BYTES {
            pool.push((self.device, memory));
        }
    }
}
