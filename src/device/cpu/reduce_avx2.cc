// AVX2 + F16C reduction kernels: 256-bit vectors, the same bits as the portable kernels
// (reduce_portable.cc, whose comments give the reasoning for each rule). Compiled with
// -mavx2 -mf16c and only called after cpuid says the CPU has both (cpu_isa.h); see
// simd_loop.h for why nothing here may have external linkage but avx2Table().
// Only x86 has the header; elsewhere this file compiles to the empty table below.
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include <cstddef>
#include <cstdint>

#include "device/cpu/kernel_table.h"
#include "device/cpu/simd_loop.h"

#if defined(__FAST_MATH__)
#error "src/device/cpu/reduce_avx2.cc must not be compiled with -ffast-math"
#endif

namespace hoop::cpu_kernels {

// Built without the flags (a non-x86 target): an empty table, so the portable kernels run.
#if !(defined(__AVX2__) && defined(__F16C__))
const KernelTable& avx2Table() {
  static constexpr KernelTable kNone{};
  return kNone;
}
#else
namespace {

// ---- Integers: wrap-around add/multiply, compares in the type's own signedness. ----

template <typename T>
struct IntLoad {
  using Storage = T;
  using Vec = __m256i;
  static constexpr size_t kWidth = 32 / sizeof(T);
  static Vec load(const T* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static void store(T* p, Vec v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
};

// x86 has no 8-bit multiply: multiply the even and the odd bytes as 16-bit words, whose low byte
// is the product modulo 256 (the same for signed and unsigned).
inline __m256i mulBytes(__m256i a, __m256i b) {
  const __m256i even = _mm256_mullo_epi16(a, b);
  const __m256i odd = _mm256_mullo_epi16(_mm256_srli_epi16(a, 8), _mm256_srli_epi16(b, 8));
  return _mm256_or_si256(_mm256_and_si256(even, _mm256_set1_epi16(0xff)),
                         _mm256_slli_epi16(odd, 8));
}

// No 64-bit multiply in AVX2: lo(a)*lo(b) as a full 64-bit product plus the two cross products
// (only their low 32 bits survive the shift), which is a*b modulo 2^64.
inline __m256i mulQuads(__m256i a, __m256i b) {
  const __m256i low = _mm256_mul_epu32(a, b);
  const __m256i cross = _mm256_mullo_epi32(a, _mm256_shuffle_epi32(b, 0xb1));  // lo*hi, hi*lo
  const __m256i crossSum = _mm256_add_epi32(cross, _mm256_srli_epi64(cross, 32));
  return _mm256_add_epi64(low, _mm256_slli_epi64(crossSum, 32));
}

// Integer averages: x86 has no vector integer division, but for integers below 2^32 a quotient
// computed in fp64 (below 2^16: in fp32) and truncated is exactly C++'s truncating division:
// when x / d is not an integer it lies at least 1 / (x + d) of itself (about 2^-33; fp32: 2^-17)
// below the next integer, far more than one division's rounding error, so it never rounds up
// onto that integer. A divisor too large to convert exactly gives a quotient below 1, truncated
// to 0 as the exact one. 64-bit integers have no exact path and stay with the portable kernels.
// 8 lanes of 8-bit values, divided in fp32 as 32-bit integers.
template <bool kSigned>
inline __m256i divideBytes8(__m128i bytes, __m256 d) {
  const __m256i wide = kSigned ? _mm256_cvtepi8_epi32(bytes) : _mm256_cvtepu8_epi32(bytes);
  return _mm256_cvttps_epi32(_mm256_div_ps(_mm256_cvtepi32_ps(wide), d));
}
template <bool kSigned>
inline __m256i divideBytes(__m256i v, __m256 d) {
  const __m128i low = _mm256_castsi256_si128(v);
  const __m128i high = _mm256_extracti128_si256(v, 1);
  const __m256i q0 = divideBytes8<kSigned>(low, d);
  const __m256i q1 = divideBytes8<kSigned>(_mm_srli_si128(low, 8), d);
  const __m256i q2 = divideBytes8<kSigned>(high, d);
  const __m256i q3 = divideBytes8<kSigned>(_mm_srli_si128(high, 8), d);
  // Quotients fit in int8 (|x| / 2 at most), so the saturating packs are exact. They pack within
  // 128-bit halves, leaving 4-byte groups in the order q0 q1 q2 q3 (low elements), q0 q1 q2 q3
  // (high elements); the permute puts each q's two groups back together.
  const __m256i packed = _mm256_packs_epi16(_mm256_packs_epi32(q0, q1), _mm256_packs_epi32(q2, q3));
  return _mm256_permutevar8x32_epi32(packed, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

// 4 lanes of 32-bit values, divided in fp64. AVX2 converts only signed integers: an unsigned
// value is converted with its top bit flipped, and 2^31 added back (exact in fp64). Unsigned
// quotients are below 2^31 (the divisor is at least 2), so the signed truncation holds them.
template <bool kSigned>
inline __m128i divideWords4(__m128i v, __m256d d) {
  __m256d x;
  if constexpr (kSigned) {
    x = _mm256_cvtepi32_pd(v);
  } else {
    x = _mm256_add_pd(_mm256_cvtepi32_pd(_mm_xor_si128(v, _mm_set1_epi32(INT32_MIN))),
                      _mm256_set1_pd(2147483648.0));
  }
  return _mm256_cvttpd_epi32(_mm256_div_pd(x, d));
}
template <bool kSigned>
inline __m256i divideWords(__m256i v, __m256d d) {
  return _mm256_set_m128i(divideWords4<kSigned>(_mm256_extracti128_si256(v, 1), d),
                          divideWords4<kSigned>(_mm256_castsi256_si128(v), d));
}

// fp32 is exact for the 8-bit types' quotients, fp64 for the 32-bit types' (see above).
struct SmallDivisor {
  using Divisor = __m256;
  static Divisor divisor(size_t d) { return _mm256_set1_ps(static_cast<float>(d)); }
};
struct WordDivisor {
  using Divisor = __m256d;
  static Divisor divisor(size_t d) { return _mm256_set1_pd(static_cast<double>(d)); }
};

struct Int8Lane : IntLoad<int8_t>, SmallDivisor {
  static Vec sum(Vec a, Vec b) { return _mm256_add_epi8(a, b); }
  static Vec prod(Vec a, Vec b) { return mulBytes(a, b); }
  static Vec max(Vec a, Vec b) { return _mm256_max_epi8(a, b); }
  static Vec min(Vec a, Vec b) { return _mm256_min_epi8(a, b); }
  static Vec divide(Vec x, Divisor d) { return divideBytes<true>(x, d); }
};
struct Uint8Lane : IntLoad<uint8_t>, SmallDivisor {
  static Vec sum(Vec a, Vec b) { return _mm256_add_epi8(a, b); }
  static Vec prod(Vec a, Vec b) { return mulBytes(a, b); }
  static Vec max(Vec a, Vec b) { return _mm256_max_epu8(a, b); }
  static Vec min(Vec a, Vec b) { return _mm256_min_epu8(a, b); }
  static Vec divide(Vec x, Divisor d) { return divideBytes<false>(x, d); }
};
struct Int32Lane : IntLoad<int32_t>, WordDivisor {
  static Vec sum(Vec a, Vec b) { return _mm256_add_epi32(a, b); }
  static Vec prod(Vec a, Vec b) { return _mm256_mullo_epi32(a, b); }
  static Vec max(Vec a, Vec b) { return _mm256_max_epi32(a, b); }
  static Vec min(Vec a, Vec b) { return _mm256_min_epi32(a, b); }
  static Vec divide(Vec x, Divisor d) { return divideWords<true>(x, d); }
};
struct Uint32Lane : IntLoad<uint32_t>, WordDivisor {
  static Vec sum(Vec a, Vec b) { return _mm256_add_epi32(a, b); }
  static Vec prod(Vec a, Vec b) { return _mm256_mullo_epi32(a, b); }
  static Vec max(Vec a, Vec b) { return _mm256_max_epu32(a, b); }
  static Vec min(Vec a, Vec b) { return _mm256_min_epu32(a, b); }
  static Vec divide(Vec x, Divisor d) { return divideWords<false>(x, d); }
};

// 64-bit max/min: AVX2 has only a signed compare; unsigned compares flip the sign bits first.
template <bool kSigned>
inline __m256i greater64(__m256i a, __m256i b) {
  if constexpr (kSigned) {
    return _mm256_cmpgt_epi64(a, b);
  } else {
    const __m256i flip = _mm256_set1_epi64x(INT64_MIN);
    return _mm256_cmpgt_epi64(_mm256_xor_si256(a, flip), _mm256_xor_si256(b, flip));
  }
}

template <typename T>
struct Int64Lane : IntLoad<T> {
  using Vec = __m256i;
  static constexpr bool kSigned = static_cast<T>(-1) < 0;
  static Vec sum(Vec a, Vec b) { return _mm256_add_epi64(a, b); }
  static Vec prod(Vec a, Vec b) { return mulQuads(a, b); }
  static Vec max(Vec a, Vec b) { return _mm256_blendv_epi8(b, a, greater64<kSigned>(a, b)); }
  static Vec min(Vec a, Vec b) { return _mm256_blendv_epi8(a, b, greater64<kSigned>(a, b)); }
};

// ---- Floats. max/min follow the portable selects step by step: the larger (smaller) by an
// ordered compare, then +0/-0 ties resolved by AND (OR) of the bits, then a's NaN over
// everything, so b's NaN wins only when a is a number. (vmaxps alone returns its second operand
// for NaN and for equal zeros, which is neither symmetric nor what reduce.h documents.) ----

// Sum and product: a NaN in `a` wins, made quiet, as in the portable kernels. The hardware would
// do that by itself if `a` stayed the first source operand, but the compiler treats vector + and
// * as commutative and may swap them.
inline __m256 firstNaNWins(__m256 a, __m256 result) {
  const __m256 quietA = _mm256_or_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(0x00400000)));
  return _mm256_blendv_ps(result, quietA, _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
}
inline __m256d firstNaNWins(__m256d a, __m256d result) {
  const __m256d quietA =
      _mm256_or_pd(a, _mm256_castsi256_pd(_mm256_set1_epi64x(0x0008000000000000)));
  return _mm256_blendv_pd(result, quietA, _mm256_cmp_pd(a, a, _CMP_UNORD_Q));
}

struct F32Math {
  using Vec = __m256;
  using Divisor = __m256;
  static Vec sum(Vec a, Vec b) { return firstNaNWins(a, _mm256_add_ps(a, b)); }
  static Vec prod(Vec a, Vec b) { return firstNaNWins(a, _mm256_mul_ps(a, b)); }
  static Vec max(Vec a, Vec b) {
    Vec r = _mm256_blendv_ps(b, a, _mm256_cmp_ps(a, b, _CMP_GT_OQ));
    r = _mm256_blendv_ps(r, _mm256_and_ps(a, b), _mm256_cmp_ps(a, b, _CMP_EQ_OQ));
    return _mm256_blendv_ps(r, a, _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
  }
  static Vec min(Vec a, Vec b) {
    Vec r = _mm256_blendv_ps(b, a, _mm256_cmp_ps(a, b, _CMP_LT_OQ));
    r = _mm256_blendv_ps(r, _mm256_or_ps(a, b), _mm256_cmp_ps(a, b, _CMP_EQ_OQ));
    return _mm256_blendv_ps(r, a, _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
  }
  // A true division, as the portable kernel: an exact average stays exact.
  static Divisor divisor(size_t d) { return _mm256_set1_ps(static_cast<float>(d)); }
  static Vec divide(Vec x, Divisor d) { return _mm256_div_ps(x, d); }
};

struct F64Lane {
  using Storage = double;
  using Vec = __m256d;
  using Divisor = __m256d;
  static constexpr size_t kWidth = 4;
  static Vec load(const double* p) { return _mm256_loadu_pd(p); }
  static void store(double* p, Vec v) { _mm256_storeu_pd(p, v); }
  static Vec sum(Vec a, Vec b) { return firstNaNWins(a, _mm256_add_pd(a, b)); }
  static Vec prod(Vec a, Vec b) { return firstNaNWins(a, _mm256_mul_pd(a, b)); }
  static Vec max(Vec a, Vec b) {
    Vec r = _mm256_blendv_pd(b, a, _mm256_cmp_pd(a, b, _CMP_GT_OQ));
    r = _mm256_blendv_pd(r, _mm256_and_pd(a, b), _mm256_cmp_pd(a, b, _CMP_EQ_OQ));
    return _mm256_blendv_pd(r, a, _mm256_cmp_pd(a, a, _CMP_UNORD_Q));
  }
  static Vec min(Vec a, Vec b) {
    Vec r = _mm256_blendv_pd(b, a, _mm256_cmp_pd(a, b, _CMP_LT_OQ));
    r = _mm256_blendv_pd(r, _mm256_or_pd(a, b), _mm256_cmp_pd(a, b, _CMP_EQ_OQ));
    return _mm256_blendv_pd(r, a, _mm256_cmp_pd(a, a, _CMP_UNORD_Q));
  }
  static Divisor divisor(size_t d) { return _mm256_set1_pd(static_cast<double>(d)); }
  static Vec divide(Vec x, Divisor d) { return _mm256_div_pd(x, d); }
};

struct F32Lane : F32Math {
  using Storage = float;
  static constexpr size_t kWidth = 8;
  static Vec load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, Vec v) { _mm256_storeu_ps(p, v); }
};

// fp16 through F16C: VCVTPH2PS widens exactly (NaNs come out quiet with their payload), and
// VCVTPS2PH with an immediate round-to-nearest-even narrows as floatToHalf does (half.h).
struct F16Lane : F32Math {
  using Storage = uint16_t;
  static constexpr size_t kWidth = 8;
  static Vec load(const uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static void store(uint16_t* p, Vec v) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
  }
};

// bf16 by bit shifts: widening is exact (a bf16 is the top half of an fp32), narrowing is
// floatToBf16's integer rounding, vectorized. (AVX512_BF16's VCVTNEPS2BF16 would narrow in one
// instruction, but it flushes fp32 subnormals to zero, which the portable kernels do not.)
//
// One 256-bit load of 16 values becomes two fp32 vectors by interleaving zero words below each
// value (VPUNPCKLWD / VPUNPCKHWD). That works within 128-bit lanes, so each vector holds a
// permutation of the elements; the ops are element-wise, and the saturating pack in store()
// (VPACKUSDW, also per 128-bit lane) is the exact inverse of the interleave. Cheaper than
// zero-extending across lanes and narrowing with a cross-lane permute: bf16 is compute bound in
// cache.
struct F32Pair {
  __m256 low;
  __m256 high;
};

struct Bf16Lane {
  using Storage = uint16_t;
  using Vec = F32Pair;
  using Divisor = F32Math::Divisor;
  static constexpr size_t kWidth = 16;
  static Vec load(const uint16_t* p) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    const __m256i zero = _mm256_setzero_si256();
    return {_mm256_castsi256_ps(_mm256_unpacklo_epi16(zero, v)),
            _mm256_castsi256_ps(_mm256_unpackhi_epi16(zero, v))};
  }
  static void store(uint16_t* p, Vec v) {
    // Every lane is below 2^16, so the saturating pack is exact.
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p),
                        _mm256_packus_epi32(narrow(v.low), narrow(v.high)));
  }
  // The bf16 bits of each fp32, in the low half of a 32-bit lane.
  static __m256i narrow(__m256 v) {
    const __m256i x = _mm256_castps_si256(v);
    const __m256i high = _mm256_srli_epi32(x, 16);
    const __m256i lowestKept = _mm256_and_si256(high, _mm256_set1_epi32(1));
    const __m256i rounded = _mm256_srli_epi32(
        _mm256_add_epi32(_mm256_add_epi32(x, _mm256_set1_epi32(0x7fff)), lowestKept), 16);
    // A NaN keeps its top bits and is made quiet instead: rounding could carry it into inf.
    const __m256i quietNaN = _mm256_or_si256(high, _mm256_set1_epi32(0x40));
    return _mm256_blendv_epi8(rounded, quietNaN,
                              _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
  }
  static Vec sum(Vec a, Vec b) {
    return {F32Math::sum(a.low, b.low), F32Math::sum(a.high, b.high)};
  }
  static Vec prod(Vec a, Vec b) {
    return {F32Math::prod(a.low, b.low), F32Math::prod(a.high, b.high)};
  }
  static Vec max(Vec a, Vec b) {
    return {F32Math::max(a.low, b.low), F32Math::max(a.high, b.high)};
  }
  static Vec min(Vec a, Vec b) {
    return {F32Math::min(a.low, b.low), F32Math::min(a.high, b.high)};
  }
  static Divisor divisor(size_t d) { return F32Math::divisor(d); }
  static Vec divide(Vec x, Divisor d) {
    return {F32Math::divide(x.low, d), F32Math::divide(x.high, d)};
  }
};

constexpr KernelTable kAvx2Kernels =
    simdKernelTable<Int8Lane, Uint8Lane, Int32Lane, Uint32Lane, Int64Lane<int64_t>,
                    Int64Lane<uint64_t>, F16Lane, F32Lane, F64Lane, Bf16Lane>();

}  // namespace

const KernelTable& avx2Table() { return kAvx2Kernels; }
#endif

}  // namespace hoop::cpu_kernels
