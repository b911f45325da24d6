//===- GPUTarget.h - the NVIDIA target of the GPU code generation -*- C++ -*-===//
//
// What the GPU code generation (lib/Codegen/GPU) and the tx-to-nvvm pipeline
// resolve about the target: the PTX feature of a chip, the CUDA Toolkit and
// its libdevice.
//
//===----------------------------------------------------------------------===//

#ifndef TXDIALECT_CODEGEN_GPUTARGET_H
#define TXDIALECT_CODEGEN_GPUTARGET_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir {
namespace tx {

/// The PTX feature used when none is given: the lowest PTX ISA version that
/// LLVM's NVPTX back end accepts for `chip` (e.g. +ptx80 for sm_90a). Empty
/// when the chip is not one the pipeline knows.
std::string defaultPTXFeature(llvm::StringRef chip);

/// The CUDA Toolkit the pipeline uses when none is given: of the directory of
/// CUDA_ROOT/CUDA_HOME/CUDA_PATH, the one above the `ptxas` on PATH and
/// /usr/local/cuda, the first with libdevice, else the first with ptxas;
/// empty when none exists.
std::string findCUDAToolkit();

/// The libdevice bitcode the pipeline links: `nvvm/libdevice/libdevice.10.bc`
/// in `toolkit`, else Debian's nvidia-cuda-toolkit copy; empty when none.
std::string findLibdevice(llvm::StringRef toolkit);

} // namespace tx
} // namespace mlir

#endif // TXDIALECT_CODEGEN_GPUTARGET_H
