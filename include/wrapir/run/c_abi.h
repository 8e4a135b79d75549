/* wrapir/run/c_abi.h: the C interface between a program emitted by
 * `wrapir::cpp::to_cpp` (emit/cpp.hpp) and the host that runs it.
 *
 * C99 and C++; no dependencies but <stddef.h> and <stdint.h>. The emitted
 * translation unit carries a copy of this text under the same include guard
 * (a test keeps the two equal), so it compiles without wrapir's headers.
 *
 * Values. A `wrapir_value` is a tagged value: a tensor (a strided view of
 * bytes the caller or callee owns), an integer, a float, a bool, a string,
 * a device, a dtype or a list of values. Dtypes are numbered as below
 * (fixed by this header; `wrapir::run::c_abi` checks they match wrapir's).
 *
 * Devices. A tensor value's `device_type` says where its bytes are:
 * WRAPIR_DEVICE_CPU (0, host memory) or WRAPIR_DEVICE_CUDA (device memory
 * of the stream's device: `data` and `storage` are CUdeviceptr values).
 *
 * Ownership. A value handed *into* a call (program inputs, extern
 * arguments) is borrowed for the call. A value handed *back* (program
 * outputs, extern results) carries `owner` and `release`: the receiver
 * calls `release(owner)` once it no longer needs it (null `release`: nothing
 * to free). For a list, the list's own `release` frees the items array
 * only; each item carries its own owner, which the receiver releases (or
 * keeps) separately.
 *
 * Externs. The host provides a `wrapir_extern_table`: `lookup` resolves an
 * extern by the name the program spells (`extern_kernels.mm`,
 * `aten.topk.default`) to a handle once per run; `call` runs it with the
 * calling conventions of wrapir/run/extern.hpp (out= results as the keyword
 * `out`, in-place fallbacks with `self` first). Errors are a non-zero return
 * and a NUL-terminated message written into `message` (at most
 * `message_size` bytes, terminator included).
 *
 * The entry point. An emitted program with prefix P (default
 * `wrapir_model`) defines
 *
 *   int P_run(const wrapir_extern_table* externs,
 *             const wrapir_value* inputs, size_t input_count,
 *             wrapir_value* outputs, size_t output_count,
 *             void* stream, char* message, size_t message_size);
 *   const wrapir_program_info* P_info(void);
 *
 * and a CUDA program (info's device_type WRAPIR_DEVICE_CUDA) also
 *
 *   int P_init(const char* kernel_directory, char* message, size_t message_size);
 *
 * which names the directory its cubins are read from (the export's, where
 * kernels.json is), before the first run; kernels are loaded lazily, once,
 * in the context current at their first launch. Unless its cubins are
 * embedded, running before P_init fails with a message.
 *
 * `inputs` are the program's inputs in order (tensors and integers);
 * `outputs` receives its outputs (tensors the caller releases, integers,
 * None). `stream` is a CUstream for CUDA programs (its context is made
 * current for the call; null: the legacy default stream of the caller's
 * current context) and must be null for CPU ones. A CUDA program's work is
 * asynchronous on the stream (the call returns once it is queued, except
 * where a device scalar is read on the host); its outputs are freed with
 * cuMemFreeAsync on that stream when released, so release them before the
 * stream is destroyed. Returns WRAPIR_OK, or an error code with a message naming the
 * failing line, call and kernel. */
#ifndef WRAPIR_RUN_C_ABI_H
#define WRAPIR_RUN_C_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WRAPIR_C_ABI_VERSION 1
/* Tensors of more dimensions are refused with an error. */
#define WRAPIR_MAX_DIMS 16

/* Return codes. */
#define WRAPIR_OK 0
#define WRAPIR_ERROR_INVALID_ARGUMENT 1 /* inputs, outputs or table do not fit the program */
#define WRAPIR_ERROR_RUNTIME 2          /* a line failed (an assert, a bad size, an extern) */
#define WRAPIR_ERROR_OUT_OF_MEMORY 3

typedef enum wrapir_value_kind {
  WRAPIR_VALUE_NONE = 0,
  WRAPIR_VALUE_TENSOR = 1,
  WRAPIR_VALUE_INT = 2,
  WRAPIR_VALUE_FLOAT = 3,
  WRAPIR_VALUE_BOOL = 4,
  WRAPIR_VALUE_STRING = 5,
  WRAPIR_VALUE_DEVICE = 6,
  WRAPIR_VALUE_DTYPE = 7,
  WRAPIR_VALUE_LIST = 8
} wrapir_value_kind;

/* Dtype numbers (wrapir's order). */
typedef enum wrapir_dtype {
  WRAPIR_DTYPE_BOOL = 0,
  WRAPIR_DTYPE_UINT8 = 1,
  WRAPIR_DTYPE_INT8 = 2,
  WRAPIR_DTYPE_INT16 = 3,
  WRAPIR_DTYPE_INT32 = 4,
  WRAPIR_DTYPE_INT64 = 5,
  WRAPIR_DTYPE_UINT16 = 6,
  WRAPIR_DTYPE_UINT32 = 7,
  WRAPIR_DTYPE_UINT64 = 8,
  WRAPIR_DTYPE_FLOAT16 = 9,
  WRAPIR_DTYPE_BFLOAT16 = 10,
  WRAPIR_DTYPE_FLOAT32 = 11,
  WRAPIR_DTYPE_FLOAT64 = 12,
  WRAPIR_DTYPE_COMPLEX32 = 13,
  WRAPIR_DTYPE_COMPLEX64 = 14,
  WRAPIR_DTYPE_COMPLEX128 = 15,
  WRAPIR_DTYPE_FLOAT8_E4M3FN = 16,
  WRAPIR_DTYPE_FLOAT8_E5M2 = 17,
  WRAPIR_DTYPE_FLOAT8_E4M3FNUZ = 18,
  WRAPIR_DTYPE_FLOAT8_E5M2FNUZ = 19,
  WRAPIR_DTYPE_FLOAT8_E8M0FNU = 20,
  WRAPIR_DTYPE_FLOAT4_E2M1FN_X2 = 21
} wrapir_dtype;

/* Device types (WRAPIR_VALUE_DEVICE and tensors). */
typedef enum wrapir_device_type { WRAPIR_DEVICE_CPU = 0, WRAPIR_DEVICE_CUDA = 1 } wrapir_device_type;

typedef struct wrapir_tensor {
  void* data;             /* element 0 (null only for an empty tensor) */
  void* storage;          /* the first byte of the storage that holds the elements */
  int64_t storage_nbytes; /* bytes from `storage` that the tensor may address */
  int32_t dtype;          /* wrapir_dtype */
  int32_t ndim;           /* 0 to WRAPIR_MAX_DIMS */
  int64_t sizes[WRAPIR_MAX_DIMS];
  int64_t strides[WRAPIR_MAX_DIMS]; /* in elements */
} wrapir_tensor;

typedef struct wrapir_value {
  int32_t kind;          /* wrapir_value_kind */
  int32_t device_type;   /* DEVICE, and TENSOR (where its bytes are): wrapir_device_type */
  int64_t integer;       /* INT; BOOL (0 or 1); DTYPE (wrapir_dtype); DEVICE: the index, -1 for none */
  double real;           /* FLOAT */
  const char* string;    /* STRING: NUL-terminated UTF-8 */
  wrapir_tensor tensor;  /* TENSOR */
  struct wrapir_value* items; /* LIST */
  size_t count;               /* LIST */
  void* owner;                /* results only: what `release` frees */
  void (*release)(void* owner);
} wrapir_value;

typedef struct wrapir_kwarg {
  const char* name;
  wrapir_value value;
} wrapir_kwarg;

typedef struct wrapir_extern_table {
  uint32_t abi_version; /* WRAPIR_C_ABI_VERSION */
  void* host;           /* passed back to lookup and call */
  /* The extern called `name`: a handle >= 0, or -1 when the host has none. */
  int64_t (*lookup)(void* host, const char* name);
  /* Runs extern `handle`. 0 on success, with *result set (NONE for out= and
   * in-place externs); else non-zero with a message. */
  int (*call)(void* host, int64_t handle, const wrapir_value* args, size_t arg_count, const wrapir_kwarg* kwargs,
              size_t kwarg_count, wrapir_value* result, char* message, size_t message_size);
} wrapir_extern_table;

typedef struct wrapir_program_info {
  uint32_t abi_version;
  const char* name;      /* the program's name */
  size_t input_count;
  size_t output_count;
  int32_t device_type;   /* wrapir_device_type the program runs on */
} wrapir_program_info;

#ifdef __cplusplus
}
#endif

#endif /* WRAPIR_RUN_C_ABI_H */
