//===- Half.h - f16 / bf16 <-> float for 16-bit reductions ------*- C++ -*-===//

#ifndef TX_RUNTIME_COLLECTIVES_HALF_H
#define TX_RUNTIME_COLLECTIVES_HALF_H

#include <cstdint>
#include <cstring>

namespace tx::rt {

inline float bf16ToFloat(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// Round to nearest even; NaN stays NaN.
inline uint16_t floatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return uint16_t((bits >> 16) | 0x40);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return uint16_t(bits >> 16);
}

inline float f16ToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu, bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else { // subnormal: renormalise
      exp = 127 - 15 + 1;
      while (!(mant & 0x400u)) {
        mant <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// Round to nearest even, with subnormals, overflow to infinity.
inline uint16_t floatToF16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  uint16_t sign = uint16_t((bits >> 16) & 0x8000u);
  uint32_t absBits = bits & 0x7fffffffu;
  if (absBits > 0x7f800000u)
    return sign | 0x7e00u;
  if (absBits >= 0x477ff000u) // rounds to >= 65520: infinity
    return sign | 0x7c00u;
  if (absBits < 0x38800000u) { // below the smallest normal f16
    if (absBits < 0x33000000u)
      return sign;
    uint32_t exp = absBits >> 23, mant = (absBits & 0x7fffffu) | 0x800000u;
    // value = mant * 2^(exp - 150) and the f16 subnormal unit is 2^-24.
    uint32_t shift = 126 - exp;
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1u)))
      ++half;
    return sign | uint16_t(half);
  }
  uint32_t h = ((absBits - 0x38000000u) >> 13);
  uint32_t rem = absBits & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
    ++h;
  return sign | uint16_t(h);
}

} // namespace tx::rt

#endif // TX_RUNTIME_COLLECTIVES_HALF_H
