// What the hardware and driver allow, measured with nothing of ours in the way: the
// floor under the per-call cost (back-to-back launches of a 1024-element `add`, with and
// without the event a call records after itself, on each kind of stream), and the time
// of a 2^28 f32 sum in several kernel shapes beside CUB's (what CuPy's `sum` runs), and
// with three ways of bringing the value back to the host. The shapes are the ones the
// reduction entry could be lowered to; the runtime's choices follow this file's table
// (bench/README.md).
//
//     nvcc -O3 -arch=sm_90 -o floor bench/floor.cu -lcuda && ./floor
//
// Prints one line per case: its name and the median time in µs.

#include <cub/cub.cuh>
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                              \
    do {                                                                                      \
        auto e_ = (x);                                                                        \
        if (e_ != 0) {                                                                        \
            fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #x, (int)e_);      \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

using Clock = std::chrono::steady_clock;

static double us_since(Clock::time_point t) {
    return std::chrono::duration<double, std::micro>(Clock::now() - t).count();
}

template <class F> static double median_us(int reps, F f) {
    f();
    std::vector<double> t;
    for (int i = 0; i < reps; i++) {
        auto s = Clock::now();
        f();
        t.push_back(us_since(s));
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

// The elementwise entry's parameters: n, two inputs, one output, a fault word (unused).
__global__ void add_entry(unsigned long long n, const float *a, const float *b, float *c, unsigned long long *fault) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        c[i] = a[i] + b[i];
}

static void per_call(const char *name, CUstream stream, bool event, int binds) {
    CUfunction f;
    CHECK(cudaGetFuncBySymbol(&f, (const void *)add_entry));
    float *a, *c;
    CHECK(cudaMalloc(&a, 4096));
    CHECK(cudaMalloc(&c, 4096));
    unsigned long long n = 1024;
    unsigned long long *fault = nullptr;
    void *params[] = {&n, &a, &a, &c, &fault};
    std::vector<CUevent> events(8);
    for (auto &e : events) CHECK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
    const int calls = 5000;
    for (int round = 0; round < 3; round++) {
        CHECK(cudaDeviceSynchronize());
        auto s = Clock::now();
        for (int i = 0; i < calls; i++) {
            for (int b = 0; b < binds; b++) {
                CUcontext ctx;
                CHECK(cuCtxGetCurrent(&ctx));
            }
            CHECK(cuLaunchKernel(f, 4, 1, 1, 256, 1, 1, 0, stream, params, nullptr));
            if (event) CHECK(cuEventRecord(events[i % 8], stream));
        }
        CHECK(cudaDeviceSynchronize());
        if (round == 2) printf("%-44s %8.2f\n", name, us_since(s) / calls);
    }
    for (auto e : events) CHECK(cuEventDestroy(e));
    CHECK(cudaFree(a));
    CHECK(cudaFree(c));
}

// A sum in the shape of the reduction entry: each thread folds 16-byte vectors, `U` per
// step, either grid-strided over the whole array (`contiguous` false: the entry's shape
// now) or over its block's own contiguous share; one partial per block.
template <int U, bool contiguous, int MIN_BLOCKS = 1, bool last_block = false>
__global__ void __launch_bounds__(256, MIN_BLOCKS)
    fold(unsigned long long n, float *partials, const float *x, unsigned int *done = nullptr, float *out = nullptr) {
    __shared__ float values[256];
    const float4 *v = reinterpret_cast<const float4 *>(x);
    unsigned long long nv = n / 4;
    float acc = 0.0f;
    if (!contiguous) {
        unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
        unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
        for (; i + (U - 1) * stride < nv; i += U * stride) {
            float4 r[U];
#pragma unroll
            for (int j = 0; j < U; j++) r[j] = __ldg(&v[i + j * stride]);
#pragma unroll
            for (int j = 0; j < U; j++) acc = acc + r[j].x + r[j].y + r[j].z + r[j].w;
        }
        for (; i < nv; i += stride) {
            float4 r = __ldg(&v[i]);
            acc = acc + r.x + r.y + r.z + r.w;
        }
    } else {
        unsigned long long share = (nv + gridDim.x - 1) / gridDim.x;
        unsigned long long start = blockIdx.x * share, end = min(nv, start + share);
        unsigned long long i = start + threadIdx.x;
        for (; i + (U - 1) * blockDim.x < end; i += U * blockDim.x) {
            float4 r[U];
#pragma unroll
            for (int j = 0; j < U; j++) r[j] = __ldg(&v[i + j * blockDim.x]);
#pragma unroll
            for (int j = 0; j < U; j++) acc = acc + r[j].x + r[j].y + r[j].z + r[j].w;
        }
        for (; i < end; i += blockDim.x) {
            float4 r = __ldg(&v[i]);
            acc = acc + r.x + r.y + r.z + r.w;
        }
    }
    values[threadIdx.x] = acc;
    __syncthreads();
    for (int s = 128; s > 0; s >>= 1) {
        if (threadIdx.x < s) values[threadIdx.x] += values[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) partials[blockIdx.x] = values[0];
    if (!last_block) return;
    // The last block to finish folds the partials (the counter resets itself).
    __shared__ bool last;
    if (threadIdx.x == 0) {
        __threadfence();
        last = atomicAdd(done, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    acc = 0.0f;
    for (unsigned int i = threadIdx.x; i < gridDim.x; i += 256) acc += ((volatile float *)partials)[i];
    values[threadIdx.x] = acc;
    __syncthreads();
    for (int s = 128; s > 0; s >>= 1) {
        if (threadIdx.x < s) values[threadIdx.x] += values[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        *out = values[0];
        *done = 0;
    }
}

__global__ void __launch_bounds__(256) finish(unsigned long long n, float *out, const float *partials) {
    __shared__ float values[256];
    float acc = 0.0f;
    for (unsigned long long i = threadIdx.x; i < n; i += 256) acc += partials[i];
    values[threadIdx.x] = acc;
    __syncthreads();
    for (int s = 128; s > 0; s >>= 1) {
        if (threadIdx.x < s) values[threadIdx.x] += values[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) *out = values[0];
}

// How the value gets back: 0 a finishing kernel and a copy to page-locked memory (now),
// 1 the finishing kernel writes the page-locked memory itself, 2 the fold's last block
// writes it (one kernel).
template <int U, bool contiguous, int MIN_BLOCKS = 1>
static void sum_case(const char *name, const float *x, unsigned long long n, int waves, float *partials,
                     float *result, float *pinned, double expect, int back = 0, unsigned int *done = nullptr, int per_sm_override = 0) {
    int per_sm = 0, sms = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fold<U, contiguous, MIN_BLOCKS>, 256, 0));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    if (per_sm_override) per_sm = per_sm_override;
    int grid = per_sm * sms * waves;
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    std::vector<float> kernel_ms;
    double wall = median_us(20, [&] {
        *pinned = 0.0f;
        CHECK(cudaEventRecord(a));
        if (back == 2) {
            fold<U, contiguous, MIN_BLOCKS, true><<<grid, 256>>>(n, partials, x, done, pinned);
        } else {
            fold<U, contiguous, MIN_BLOCKS><<<grid, 256>>>(n, partials, x);
        }
        CHECK(cudaEventRecord(b));
        if (back == 0) {
            finish<<<1, 256>>>(grid, result, partials);
            CHECK(cudaMemcpyAsync(pinned, result, 4, cudaMemcpyDeviceToHost));
        } else if (back == 1) {
            finish<<<1, 256>>>(grid, pinned, partials);
        }
        CHECK(cudaStreamSynchronize(0));
        float ms;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        kernel_ms.push_back(ms);
    });
    std::sort(kernel_ms.begin(), kernel_ms.end());
    printf("%-44s %8.1f   fold kernel %6.1f us, %d blocks, sum %.6g (expect %.6g)\n", name, wall,
           kernel_ms[kernel_ms.size() / 2] * 1e3, grid, *pinned, expect);
}

int main() {
    CHECK(cuInit(0));
    CHECK(cudaSetDevice(0));
    CHECK(cudaFree(0));
    cudaStream_t created;
    CHECK(cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking));

    puts("# per call, 1024 f32, 5000 calls queued back to back (us)");
    per_call("launch only, per-thread stream", CU_STREAM_PER_THREAD, false, 0);
    per_call("launch + event, per-thread stream", CU_STREAM_PER_THREAD, true, 0);
    per_call("launch + event + 4 cuCtxGetCurrent", CU_STREAM_PER_THREAD, true, 4);
    per_call("launch only, created stream", (CUstream)created, false, 0);
    per_call("launch + event, created stream", (CUstream)created, true, 0);
    per_call("launch only, legacy stream", CU_STREAM_LEGACY, false, 0);

    const unsigned long long n = 1ull << 28;
    std::vector<float> host(n);
    double expect = 0;
    for (unsigned long long i = 0; i < n; i++) {
        host[i] = (float)((i * 2654435761ull) % 1000) / 1000.0f;
        expect += host[i];
    }
    float *x, *partials, *result, *pinned;
    CHECK(cudaMalloc(&x, n * 4));
    CHECK(cudaMemcpy(x, host.data(), n * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMalloc(&partials, 1 << 20));
    CHECK(cudaMalloc(&result, 4));
    CHECK(cudaMallocHost(&pinned, 16));

    puts("# sum of 2^28 f32 on the device, each call waited for (us)");
    {
        void *temp = nullptr;
        size_t temp_bytes = 0;
        CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, x, result, (int)n));
        CHECK(cudaMalloc(&temp, temp_bytes));
        double wall = median_us(20, [&] {
            CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, x, result, (int)n));
            CHECK(cudaMemcpyAsync(pinned, result, 4, cudaMemcpyDeviceToHost));
            CHECK(cudaStreamSynchronize(0));
        });
        printf("%-44s %8.1f   sum %.6g\n", "cub::DeviceReduce::Sum", wall, *pinned);
        CHECK(cudaFree(temp));
    }
    sum_case<4, false>("grid-stride, 4 per step, 1 wave (now)", x, n, 1, partials, result, pinned, expect);
    sum_case<4, false>("grid-stride, 4 per step, 2 waves", x, n, 2, partials, result, pinned, expect);
    sum_case<8, false>("grid-stride, 8 per step, 1 wave", x, n, 1, partials, result, pinned, expect);
    sum_case<2, false>("grid-stride, 2 per step, 1 wave", x, n, 1, partials, result, pinned, expect);
    sum_case<1, false>("grid-stride, 1 per step, 1 wave", x, n, 1, partials, result, pinned, expect);
    sum_case<4, true>("block shares, 4 per step, 1 wave", x, n, 1, partials, result, pinned, expect);
    sum_case<8, true>("block shares, 8 per step, 1 wave", x, n, 1, partials, result, pinned, expect);
    sum_case<4, true>("block shares, 4 per step, 4 waves", x, n, 4, partials, result, pinned, expect);
    sum_case<4, false>("grid-stride, 4 per step, 1 wave (again)", x, n, 1, partials, result, pinned, expect);
    unsigned int *done;
    CHECK(cudaMalloc(&done, 4));
    CHECK(cudaMemset(done, 0, 4));
    puts("# how the value comes back (grid-stride, 4 per step, 1 wave)");
    sum_case<4, false>("finish kernel + copy (now)", x, n, 1, partials, result, pinned, expect, 0);
    sum_case<4, false>("finish kernel writes page-locked memory", x, n, 1, partials, result, pinned, expect, 1);
    sum_case<4, false>("last block writes page-locked memory", x, n, 1, partials, result, pinned, expect, 2, done);
    sum_case<4, false, 8>("the same, 8 blocks per SM forced", x, n, 1, partials, result, pinned, expect, 2, done);
    sum_case<4, false>("the same, 6 blocks per SM (our occupancy)", x, n, 1, partials, result, pinned, expect, 2, done, 6);
    sum_case<4, false>("finish + copy, 6 blocks per SM", x, n, 1, partials, result, pinned, expect, 0, nullptr, 6);
    sum_case<4, true>("block shares, 4 waves, last block", x, n, 4, partials, result, pinned, expect, 2, done);
    sum_case<4, false>("finish kernel + copy (again)", x, n, 1, partials, result, pinned, expect, 0);
    return 0;
}
