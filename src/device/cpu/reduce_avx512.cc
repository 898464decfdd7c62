// AVX-512 (F, BW, VL, DQ) reduction kernels: 512-bit vectors and mask registers, the same bits as
// the portable kernels (reduce_portable.cc gives the reasoning for each rule; reduce_avx2.cc
// the same kernels at 256 bits). Compiled with -mavx512{f,bw,vl,dq} -mf16c and only called
// after cpuid says the CPU has them (cpu_isa.h); see simd_loop.h for why nothing here may have
// external linkage but avx512Table().
// GCC 12's AVX-512 intrinsics pass a deliberately undefined vector (_mm512_undefined_*) as the
// unused merge source of the unmasked forms, and -W(maybe-)uninitialized reports it after
// inlining (GCC bug 105593). The warning is about the header, not this code.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
// Only x86 has the header; elsewhere this file compiles to the empty table below.
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include <cstddef>
#include <cstdint>

#include "device/cpu/kernel_table.h"
#include "device/cpu/simd_loop.h"

#if defined(__FAST_MATH__)
#error "src/device/cpu/reduce_avx512.cc must not be compiled with -ffast-math"
#endif

namespace hoop::cpu_kernels {

// Built without the flags (a non-x86 target): an empty table, so the portable kernels run.
#if !(defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && \
      defined(__AVX512DQ__))
const KernelTable& avx512Table() {
  static constexpr KernelTable kNone{};
  return kNone;
}
#else
namespace {

// Inputs are read as two 256-bit halves, not one 512-bit load: on the Zen 4 this was tuned on,
// 512-bit loads streaming from DRAM ran slower (docs/design-notes.md, "Measurements behind the
// defaults"), and in cache the two forms are equally fast. Stores stay 512 bits wide (splitting
// them changed nothing).
inline __m512i loadInHalves(const void* p) {
  const auto* half = static_cast<const __m256i*>(p);
  return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256(half)),
                            _mm256_loadu_si256(half + 1), 1);
}

// ---- Integers: wrap-around add/multiply, compares in the type's own signedness. ----

template <typename T>
struct IntLoad {
  using Storage = T;
  using Vec = __m512i;
  static constexpr size_t kWidth = 64 / sizeof(T);
  static Vec load(const T* p) { return loadInHalves(p); }
  static void store(T* p, Vec v) { _mm512_storeu_si512(p, v); }
};

// No 8-bit multiply: the even and the odd bytes multiply as 16-bit words, whose low byte is the
// product modulo 256 (the same for signed and unsigned); a byte mask merges the two.
inline __m512i mulBytes(__m512i a, __m512i b) {
  const __m512i even = _mm512_mullo_epi16(a, b);
  const __m512i odd =
      _mm512_slli_epi16(_mm512_mullo_epi16(_mm512_srli_epi16(a, 8), _mm512_srli_epi16(b, 8)), 8);
  return _mm512_mask_blend_epi8(0xaaaaaaaaaaaaaaaaull, even, odd);
}

// Integer averages: x86 has no vector integer division, but for integers below 2^32 a quotient
// computed in fp64 (below 2^16: in fp32) and truncated is exactly C++'s truncating division:
// when x / d is not an integer it lies at least 1 / (x + d) of itself (about 2^-33; fp32: 2^-17)
// below the next integer, far more than one division's rounding error, so it never rounds up
// onto that integer. A divisor too large to convert exactly gives a quotient below 1, truncated
// to 0 as the exact one. 64-bit integers have no exact path and stay with the portable kernels.
template <bool kSigned>
inline __m128i divideBytes16(__m128i bytes, __m512 d) {
  const __m512i wide = kSigned ? _mm512_cvtepi8_epi32(bytes) : _mm512_cvtepu8_epi32(bytes);
  return _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(_mm512_div_ps(_mm512_cvtepi32_ps(wide), d)));
}
template <bool kSigned>
inline __m512i divideBytes(__m512i v, __m512 d) {
  __m512i r = _mm512_castsi128_si512(divideBytes16<kSigned>(_mm512_castsi512_si128(v), d));
  r = _mm512_inserti32x4(r, divideBytes16<kSigned>(_mm512_extracti32x4_epi32(v, 1), d), 1);
  r = _mm512_inserti32x4(r, divideBytes16<kSigned>(_mm512_extracti32x4_epi32(v, 2), d), 2);
  return _mm512_inserti32x4(r, divideBytes16<kSigned>(_mm512_extracti32x4_epi32(v, 3), d), 3);
}

template <bool kSigned>
inline __m256i divideWords8(__m256i v, __m512d d) {
  if constexpr (kSigned) {
    return _mm512_cvttpd_epi32(_mm512_div_pd(_mm512_cvtepi32_pd(v), d));
  } else {
    return _mm512_cvttpd_epu32(_mm512_div_pd(_mm512_cvtepu32_pd(v), d));
  }
}
template <bool kSigned>
inline __m512i divideWords(__m512i v, __m512d d) {
  const __m256i low = divideWords8<kSigned>(_mm512_castsi512_si256(v), d);
  const __m256i high = divideWords8<kSigned>(_mm512_extracti64x4_epi64(v, 1), d);
  return _mm512_inserti64x4(_mm512_castsi256_si512(low), high, 1);
}

// fp32 is exact for the 8-bit types' quotients, fp64 for the 32-bit types' (see above).
struct SmallDivisor {
  using Divisor = __m512;
  static Divisor divisor(size_t d) { return _mm512_set1_ps(static_cast<float>(d)); }
};
struct WordDivisor {
  using Divisor = __m512d;
  static Divisor divisor(size_t d) { return _mm512_set1_pd(static_cast<double>(d)); }
};

struct Int8Lane : IntLoad<int8_t>, SmallDivisor {
  static Vec sum(Vec a, Vec b) { return _mm512_add_epi8(a, b); }
  static Vec prod(Vec a, Vec b) { return mulBytes(a, b); }
  static Vec max(Vec a, Vec b) { return _mm512_max_epi8(a, b); }
  static Vec min(Vec a, Vec b) { return _mm512_min_epi8(a, b); }
  static Vec divide(Vec x, Divisor d) { return divideBytes<true>(x, d); }
};
struct Uint8Lane : IntLoad<uint8_t>, SmallDivisor {
  static Vec sum(Vec a, Vec b) { return _mm512_add_epi8(a, b); }
  static Vec prod(Vec a, Vec b) { return mulBytes(a, b); }
  static Vec max(Vec a, Vec b) { return _mm512_max_epu8(a, b); }
  static Vec min(Vec a, Vec b) { return _mm512_min_epu8(a, b); }
  static Vec divide(Vec x, Divisor d) { return divideBytes<false>(x, d); }
};
struct Int32Lane : IntLoad<int32_t>, WordDivisor {
  static Vec sum(Vec a, Vec b) { return _mm512_add_epi32(a, b); }
  static Vec prod(Vec a, Vec b) { return _mm512_mullo_epi32(a, b); }
  static Vec max(Vec a, Vec b) { return _mm512_max_epi32(a, b); }
  static Vec min(Vec a, Vec b) { return _mm512_min_epi32(a, b); }
  static Vec divide(Vec x, Divisor d) { return divideWords<true>(x, d); }
};
struct Uint32Lane : IntLoad<uint32_t>, WordDivisor {
  static Vec sum(Vec a, Vec b) { return _mm512_add_epi32(a, b); }
  static Vec prod(Vec a, Vec b) { return _mm512_mullo_epi32(a, b); }
  static Vec max(Vec a, Vec b) { return _mm512_max_epu32(a, b); }
  static Vec min(Vec a, Vec b) { return _mm512_min_epu32(a, b); }
  static Vec divide(Vec x, Divisor d) { return divideWords<false>(x, d); }
};
struct Int64Lane : IntLoad<int64_t> {
  static Vec sum(Vec a, Vec b) { return _mm512_add_epi64(a, b); }
  static Vec prod(Vec a, Vec b) { return _mm512_mullo_epi64(a, b); }  // DQ
  static Vec max(Vec a, Vec b) { return _mm512_max_epi64(a, b); }
  static Vec min(Vec a, Vec b) { return _mm512_min_epi64(a, b); }
};
struct Uint64Lane : IntLoad<uint64_t> {
  static Vec sum(Vec a, Vec b) { return _mm512_add_epi64(a, b); }
  static Vec prod(Vec a, Vec b) { return _mm512_mullo_epi64(a, b); }
  static Vec max(Vec a, Vec b) { return _mm512_max_epu64(a, b); }
  static Vec min(Vec a, Vec b) { return _mm512_min_epu64(a, b); }
};

// ---- Floats. max/min follow the portable selects step by step: the larger (smaller) by an
// ordered compare, then +0/-0 ties resolved by AND (OR) of the bits, then a's NaN over
// everything, so b's NaN wins only when a is a number. (vmaxps alone returns its second operand
// for NaN and for equal zeros, which is neither symmetric nor what reduce.h documents.) ----

// Sum and product: a NaN in `a` wins, made quiet, as in the portable kernels. The hardware would
// do that by itself if `a` stayed the first source operand, but the compiler treats vector + and
// * as commutative and may swap them.
inline __m512 firstNaNWins(__m512 a, __m512 result) {
  const __m512 quietBit = _mm512_castsi512_ps(_mm512_set1_epi32(0x00400000));
  return _mm512_mask_or_ps(result, _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q), a, quietBit);
}
inline __m512d firstNaNWins(__m512d a, __m512d result) {
  const __m512d quietBit = _mm512_castsi512_pd(_mm512_set1_epi64(0x0008000000000000));
  return _mm512_mask_or_pd(result, _mm512_cmp_pd_mask(a, a, _CMP_UNORD_Q), a, quietBit);
}

struct F32Math {
  using Vec = __m512;
  using Divisor = __m512;
  static Vec sum(Vec a, Vec b) { return firstNaNWins(a, _mm512_add_ps(a, b)); }
  static Vec prod(Vec a, Vec b) { return firstNaNWins(a, _mm512_mul_ps(a, b)); }
  static Vec max(Vec a, Vec b) {
    Vec r = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_GT_OQ), b, a);
    r = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ), r, _mm512_and_ps(a, b));
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q), r, a);
  }
  static Vec min(Vec a, Vec b) {
    Vec r = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_LT_OQ), b, a);
    r = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ), r, _mm512_or_ps(a, b));
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q), r, a);
  }
  // A true division, as the portable kernel: an exact average stays exact.
  static Divisor divisor(size_t d) { return _mm512_set1_ps(static_cast<float>(d)); }
  static Vec divide(Vec x, Divisor d) { return _mm512_div_ps(x, d); }
};

struct F64Lane {
  using Storage = double;
  using Vec = __m512d;
  using Divisor = __m512d;
  static constexpr size_t kWidth = 8;
  static Vec load(const double* p) { return _mm512_castsi512_pd(loadInHalves(p)); }
  static void store(double* p, Vec v) { _mm512_storeu_pd(p, v); }
  static Vec sum(Vec a, Vec b) { return firstNaNWins(a, _mm512_add_pd(a, b)); }
  static Vec prod(Vec a, Vec b) { return firstNaNWins(a, _mm512_mul_pd(a, b)); }
  static Vec max(Vec a, Vec b) {
    Vec r = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(a, b, _CMP_GT_OQ), b, a);
    r = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(a, b, _CMP_EQ_OQ), r, _mm512_and_pd(a, b));
    return _mm512_mask_blend_pd(_mm512_cmp_pd_mask(a, a, _CMP_UNORD_Q), r, a);
  }
  static Vec min(Vec a, Vec b) {
    Vec r = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(a, b, _CMP_LT_OQ), b, a);
    r = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(a, b, _CMP_EQ_OQ), r, _mm512_or_pd(a, b));
    return _mm512_mask_blend_pd(_mm512_cmp_pd_mask(a, a, _CMP_UNORD_Q), r, a);
  }
  static Divisor divisor(size_t d) { return _mm512_set1_pd(static_cast<double>(d)); }
  static Vec divide(Vec x, Divisor d) { return _mm512_div_pd(x, d); }
};

struct F32Lane : F32Math {
  using Storage = float;
  static constexpr size_t kWidth = 16;
  static Vec load(const float* p) { return _mm512_castsi512_ps(loadInHalves(p)); }
  static void store(float* p, Vec v) { _mm512_storeu_ps(p, v); }
};

// fp16: VCVTPH2PS widens exactly (NaNs come out quiet with their payload); VCVTPS2PH with an
// immediate round-to-nearest-even narrows as floatToHalf does (half.h).
struct F16Lane : F32Math {
  using Storage = uint16_t;
  static constexpr size_t kWidth = 16;
  static Vec load(const uint16_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static void store(uint16_t* p, Vec v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p),
                        _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
};

// bf16 by bit shifts: widening is exact (a bf16 is the top half of an fp32), narrowing is
// floatToBf16's integer rounding, vectorized. (AVX512_BF16's VCVTNEPS2BF16 would narrow in one
// instruction, but it flushes fp32 subnormals to zero, which the portable kernels do not.)
//
// One 512-bit load of 32 values becomes two fp32 vectors by interleaving zero words below each
// value (VPUNPCKLWD / VPUNPCKHWD). That works within 128-bit lanes, so each vector holds a
// permutation of the elements; the ops are element-wise, and the saturating pack in store()
// (VPACKUSDW, also per 128-bit lane) is the exact inverse of the interleave. Cheaper than
// zero-extending across lanes and narrowing with VPMOVDW: bf16 is compute bound in cache.
struct F32Pair {
  __m512 low;
  __m512 high;
};

struct Bf16Lane {
  using Storage = uint16_t;
  using Vec = F32Pair;
  using Divisor = F32Math::Divisor;
  static constexpr size_t kWidth = 32;
  static Vec load(const uint16_t* p) {
    const __m512i v = loadInHalves(p);
    const __m512i zero = _mm512_setzero_si512();
    return {_mm512_castsi512_ps(_mm512_unpacklo_epi16(zero, v)),
            _mm512_castsi512_ps(_mm512_unpackhi_epi16(zero, v))};
  }
  static void store(uint16_t* p, Vec v) {
    // Every lane is below 2^16, so the saturating pack is exact.
    _mm512_storeu_si512(p, _mm512_packus_epi32(narrow(v.low), narrow(v.high)));
  }
  // The bf16 bits of each fp32, in the low half of a 32-bit lane.
  static __m512i narrow(__m512 v) {
    const __m512i x = _mm512_castps_si512(v);
    const __m512i high = _mm512_srli_epi32(x, 16);
    const __m512i lowestKept = _mm512_and_si512(high, _mm512_set1_epi32(1));
    const __m512i rounded = _mm512_srli_epi32(
        _mm512_add_epi32(_mm512_add_epi32(x, _mm512_set1_epi32(0x7fff)), lowestKept), 16);
    // A NaN keeps its top bits and is made quiet instead: rounding could carry it into inf.
    return _mm512_mask_or_epi32(rounded, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), high,
                                _mm512_set1_epi32(0x40));
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

constexpr KernelTable kAvx512Kernels =
    simdKernelTable<Int8Lane, Uint8Lane, Int32Lane, Uint32Lane, Int64Lane, Uint64Lane, F16Lane,
                    F32Lane, F64Lane, Bf16Lane>();

}  // namespace

const KernelTable& avx512Table() { return kAvx512Kernels; }
#endif

}  // namespace hoop::cpu_kernels
