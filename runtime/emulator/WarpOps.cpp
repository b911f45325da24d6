//===- WarpOps.cpp - mma.sync, ldmatrix and cvt on the emulated device ----===//
//
// Fragment layouts as the PTX ISA (version 8.x) gives them:
//  - section 9.7.14.5.8, "Matrix Fragments for mma.m16n8k16 with floating
//    point type" (f16 and bf16 A/B, f32 C/D);
//  - section 9.7.14.5.7, "Matrix Fragments for mma.m16n8k8", .tf32 case;
//  - section 9.7.14.5.15, "Warp-level matrix load instruction: ldmatrix".
// In all of them groupID = laneid >> 2 and threadID_in_group = laneid % 4.
//
//===----------------------------------------------------------------------===//

#include "Emulator.h"

#include <cmath>
#include <cstring>

using namespace tx::emulator;

namespace {
float halfToFloat(uint16_t h) {
  uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float v;
  if (exp == 0)
    v = std::ldexp(static_cast<float>(mant), -24);
  else if (exp == 31)
    v = mant ? NAN : INFINITY;
  else
    v = std::ldexp(static_cast<float>(mant | 0x400), static_cast<int>(exp) - 25);
  return sign ? -v : v;
}
float bf16ToFloat(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float v;
  std::memcpy(&v, &bits, 4);
  return v;
}
/// The value of a .tf32 operand register: the hardware reads the sign,
/// exponent and top 10 mantissa bits of the 32-bit register (the low 13 bits
/// are ignored).
float tf32ToFloat(uint32_t bits) {
  bits &= 0xffffe000u;
  float v;
  std::memcpy(&v, &bits, 4);
  return v;
}

template <typename T> T slot(const char *slots, int i) {
  T v;
  std::memcpy(&v, slots + i * kSlotBytes, sizeof(T));
  return v;
}
template <typename T> void setSlot(char *slots, int i, T v) {
  std::memcpy(slots + i * kSlotBytes, &v, sizeof(T));
}

/// The 16-bit element `e` (0 low, 1 high) of a 32-bit register slot.
uint16_t half16(const char *slots, int reg, int e) {
  uint32_t r = slot<uint32_t>(slots, reg);
  return static_cast<uint16_t>(e ? r >> 16 : r & 0xffff);
}

/// D = A * B + C for one m16n8k16 (f16 or bf16) or m16n8k8 (tf32) mma.sync;
/// products are exact in double and each D element is rounded to f32 once.
void mma(IntrinsicKind kind, char *const *args, char *const *results) {
  const bool tf32 = kind == kMmaM16N8K8TF32;
  const int K = tf32 ? 8 : 16;
  float (*convert16)(uint16_t) =
      kind == kMmaM16N8K16BF16 ? bf16ToFloat : halfToFloat;
  double A[16][16] = {}, B[16][8] = {}, C[16][8] = {};
  for (int lane = 0; lane < 32; ++lane) {
    const char *s = args[lane];
    int group = lane >> 2, inGroup = lane % 4;
    if (tf32) {
      // A: a0..a3 (slots 0-3), one element each.
      for (int i = 0; i < 4; ++i) {
        int row = group + ((i == 1 || i == 3) ? 8 : 0);
        int col = inGroup + (i >= 2 ? 4 : 0);
        A[row][col] = tf32ToFloat(slot<uint32_t>(s, i));
      }
      // B: b0, b1 (slots 4-5).
      for (int i = 0; i < 2; ++i)
        B[inGroup + 4 * i][group] = tf32ToFloat(slot<uint32_t>(s, 4 + i));
    } else {
      // A: four .f16x2/.bf16x2 registers (slots 0-3) holding a0..a7; ai is
      // half (i & 1) of register i / 2.
      for (int i = 0; i < 8; ++i) {
        int row = group + ((i % 4) >= 2 ? 8 : 0);
        int col = inGroup * 2 + (i & 1) + (i >= 4 ? 8 : 0);
        A[row][col] = convert16(half16(s, i / 2, i & 1));
      }
      // B: two registers (slots 4-5) holding b0..b3.
      for (int i = 0; i < 4; ++i) {
        int row = inGroup * 2 + (i & 1) + (i >= 2 ? 8 : 0);
        B[row][group] = convert16(half16(s, 4 + i / 2, i & 1));
      }
    }
    // C: c0..c3 (slots 6-9), f32.
    for (int i = 0; i < 4; ++i)
      C[group + (i >= 2 ? 8 : 0)][inGroup * 2 + (i & 1)] =
          slot<float>(s, 6 + i);
  }
  for (int lane = 0; lane < 32; ++lane) {
    int group = lane >> 2, inGroup = lane % 4;
    for (int i = 0; i < 4; ++i) {
      int row = group + (i >= 2 ? 8 : 0), col = inGroup * 2 + (i & 1);
      double d = C[row][col];
      for (int k = 0; k < K; ++k)
        d += A[row][k] * B[k][col];
      setSlot<float>(results[lane], i, static_cast<float>(d));
    }
  }
}

/// ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{,.trans}.b16: lanes 8j..8j+7 give
/// the row addresses of matrix j (slot 0); every lane receives, for each
/// matrix j, one 32-bit register (result slot j) holding row groupID,
/// columns 2*threadID_in_group and +1 (transposed: those two rows, column
/// groupID).
void ldmatrix(int matrices, bool trans, char *const *args,
              char *const *results) {
  for (int lane = 0; lane < 32; ++lane) {
    int group = lane >> 2, inGroup = lane % 4;
    for (int j = 0; j < matrices; ++j) {
      uint16_t e[2];
      for (int k = 0; k < 2; ++k) {
        int row = trans ? inGroup * 2 + k : group;
        int col = trans ? group : inGroup * 2 + k;
        const char *rowAddr = slot<const char *>(args[8 * j + row], 0);
        const char *p = rowAddr + 2 * col;
        checkAccess(p, 2, AccessKind::WarpLoad, "ldmatrix");
        std::memcpy(&e[k], p, 2);
      }
      uint32_t reg = static_cast<uint32_t>(e[0]) |
                     (static_cast<uint32_t>(e[1]) << 16);
      setSlot<uint32_t>(results[lane], j, reg);
    }
  }
}

/// cvt.rna.tf32.f32: round to nearest, ties away from zero, keeping 10
/// mantissa bits; the result is a 32-bit register with the low 13 bits 0
/// (PTX ISA 9.7.9.21, cvt). NaN stays NaN, infinities stay.
uint32_t cvtRnaTF32(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7f800000u) == 0x7f800000u) // inf or NaN
    return (bits & 0x7fffffu) ? 0x7fffe000u : bits;
  bits += 0x1000u; // half of the dropped 13 bits: ties away from zero
  return bits & 0xffffe000u;
}
} // namespace

bool tx::emulator::isWarpCollective(IntrinsicKind kind) {
  return kind != kCvtRnaTF32;
}

const char *tx::emulator::intrinsicName(IntrinsicKind kind) {
  switch (kind) {
  case kMmaM16N8K16F16:
    return "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32";
  case kMmaM16N8K16BF16:
    return "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32";
  case kMmaM16N8K8TF32:
    return "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32";
  case kLdMatrixX1:
    return "ldmatrix.sync.aligned.m8n8.x1.b16";
  case kLdMatrixX2:
    return "ldmatrix.sync.aligned.m8n8.x2.b16";
  case kLdMatrixX4:
    return "ldmatrix.sync.aligned.m8n8.x4.b16";
  case kLdMatrixX1Trans:
    return "ldmatrix.sync.aligned.m8n8.x1.trans.b16";
  case kLdMatrixX2Trans:
    return "ldmatrix.sync.aligned.m8n8.x2.trans.b16";
  case kLdMatrixX4Trans:
    return "ldmatrix.sync.aligned.m8n8.x4.trans.b16";
  case kCvtRnaTF32:
    return "cvt.rna.tf32.f32";
  }
  return "?";
}

void tx::emulator::executeWarpCollective(IntrinsicKind kind, char *const *args,
                                         char *const *results) {
  switch (kind) {
  case kMmaM16N8K16F16:
  case kMmaM16N8K16BF16:
  case kMmaM16N8K8TF32:
    return mma(kind, args, results);
  case kLdMatrixX1:
    return ldmatrix(1, false, args, results);
  case kLdMatrixX2:
    return ldmatrix(2, false, args, results);
  case kLdMatrixX4:
    return ldmatrix(4, false, args, results);
  case kLdMatrixX1Trans:
    return ldmatrix(1, true, args, results);
  case kLdMatrixX2Trans:
    return ldmatrix(2, true, args, results);
  case kLdMatrixX4Trans:
    return ldmatrix(4, true, args, results);
  case kCvtRnaTF32:
    break;
  }
  reportError(std::string("internal error: '") + intrinsicName(kind) +
              "' is not warp-collective");
}

void tx::emulator::executeThreadIntrinsic(IntrinsicKind kind, const char *args,
                                          char *results) {
  if (kind == kCvtRnaTF32)
    return setSlot<uint32_t>(results, 0, cvtRnaTF32(slot<float>(args, 0)));
  reportError(std::string("internal error: '") + intrinsicName(kind) +
              "' is not a per-thread intrinsic");
}
