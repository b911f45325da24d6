// cuBLAS reference for bench/gpu.sh: y[M,N] = x[M,K] * W[N,K]^T (the layout
// of tx.linear) with f32 output and accumulation: f32 (FP32 math), tf32
// (f32 data, TF32 tensor-core math), f16 or bf16 inputs (tensor cores).
// Prints one line:
//   cublas <dtype> M N K <seconds per call, synchronised> <seconds, back to back>
// "synchronised" waits after every call, as the tx host code does today.
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define CHECK_CUDA(call)                                                       \
  do {                                                                         \
    cudaError_t e = (call);                                                    \
    if (e != cudaSuccess) {                                                    \
      std::fprintf(stderr, "cublas_gemm: %s failed: %s\n", #call,              \
                   cudaGetErrorString(e));                                     \
      return 1;                                                                \
    }                                                                          \
  } while (0)
#define CHECK_CUBLAS(call)                                                     \
  do {                                                                         \
    cublasStatus_t s = (call);                                                 \
    if (s != CUBLAS_STATUS_SUCCESS) {                                          \
      std::fprintf(stderr, "cublas_gemm: %s failed: status %d\n", #call,       \
                   static_cast<int>(s));                                       \
      return 1;                                                                \
    }                                                                          \
  } while (0)

int main(int argc, char **argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s f32|tf32|f16|bf16 M N K [iterations]\n",
                 argv[0]);
    return 2;
  }
  bool f16 = std::strcmp(argv[1], "f16") == 0;
  bool bf16 = std::strcmp(argv[1], "bf16") == 0;
  bool tf32 = std::strcmp(argv[1], "tf32") == 0;
  if (!f16 && !bf16 && !tf32 && std::strcmp(argv[1], "f32") != 0) {
    std::fprintf(stderr, "cublas_gemm: unknown type '%s'\n", argv[1]);
    return 2;
  }
  long m = std::atol(argv[2]), n = std::atol(argv[3]), k = std::atol(argv[4]);
  int iters = argc > 5 ? std::atoi(argv[5]) : 20;
  size_t inBytes = f16 || bf16 ? 2 : 4;
  void *x, *w, *y;
  CHECK_CUDA(cudaMalloc(&x, m * k * inBytes));
  CHECK_CUDA(cudaMalloc(&w, n * k * inBytes));
  CHECK_CUDA(cudaMalloc(&y, m * n * 4));
  CHECK_CUDA(cudaMemset(x, 0, m * k * inBytes));
  CHECK_CUDA(cudaMemset(w, 0, n * k * inBytes));
  cublasHandle_t handle;
  CHECK_CUBLAS(cublasCreate(&handle));
  float alpha = 1.0f, beta = 1.0f;
  cudaDataType_t in = f16 ? CUDA_R_16F : bf16 ? CUDA_R_16BF : CUDA_R_32F;
  cublasComputeType_t compute =
      tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  // Row-major y = x W^T is column-major y^T = W x^T: op(A) = W (transposed
  // view of the K x N column-major W), B = x^T (K x M).
  auto gemm = [&] {
    return cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &alpha, w,
                        in, k, x, in, k, &beta, y, CUDA_R_32F, n,
                        compute, CUBLAS_GEMM_DEFAULT);
  };
  CHECK_CUBLAS(gemm());
  CHECK_CUDA(cudaDeviceSynchronize());
  auto time = [&](bool syncEach) {
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) {
      gemm();
      if (syncEach)
        cudaDeviceSynchronize();
    }
    cudaDeviceSynchronize();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
               .count() /
           iters;
  };
  double synced = time(true), backToBack = time(false);
  std::printf("cublas %s %ld %ld %ld %.9f %.9f\n", argv[1], m, n, k, synced,
              backToBack);
  cublasDestroy(handle);
  cudaFree(x);
  cudaFree(w);
  cudaFree(y);
  return 0;
}
