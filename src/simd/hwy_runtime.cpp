// Highway's run-time target detection, provided here instead of linking libhwy.so.
//
// Why: Debian's libhwy.so (1.0.3) runs a static initialiser at load that calibrates the
// nanobenchmark timer (hwy::platform::TimerResolution): 4-5 ms of every process start on the
// 2-core VM (perf), i.e. a quarter of `embedscope info`'s budget, for code we never call. Our
// kernels use Highway's headers (foreach_target + HWY_EXPORT / HWY_DYNAMIC_DISPATCH), whose
// only out-of-line needs are hwy::SupportedTargets() and hwy::GetChosenTarget(); defining
// those two here lets the binaries drop the shared library.
//
// Invariant (what keeps this safe): a target bit is reported only when the CPU has every
// instruction-set extension that Highway compiles that target with, and the OS saves the
// register state it needs (XGETBV). The checks are a superset of Highway's (extra features such
// as LZCNT for AVX2 and AVX512CD for AVX3 only ever demote the choice, never promote it).
// tests/search/kernels_test.cpp compares every dispatched kernel with its scalar twin.
#include <hwy/targets.h>

#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace hwy {

namespace {

#if defined(__x86_64__) || defined(__i386__)
struct Regs {
  uint32_t a = 0, b = 0, c = 0, d = 0;
};

Regs cpuid(uint32_t leaf, uint32_t sub) {
  Regs r;
  __cpuid_count(leaf, sub, r.a, r.b, r.c, r.d);
  return r;
}

bool bit(uint32_t reg, int i) { return (reg >> i) & 1u; }

uint64_t xgetbv0() {
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t(hi) << 32) | lo;
}

int64_t detect_x86() {
  int64_t t = HWY_EMU128 | HWY_SCALAR;
  const uint32_t max_leaf = cpuid(0, 0).a;
  if (max_leaf < 1) return t;
  const Regs l1 = cpuid(1, 0);
  const Regs l7 = max_leaf >= 7 ? cpuid(7, 0) : Regs{};
  const uint32_t max_ext = cpuid(0x80000000u, 0).a;
  const Regs e1 = max_ext >= 0x80000001u ? cpuid(0x80000001u, 0) : Regs{};

  const bool sse2 = bit(l1.d, 26), sse3 = bit(l1.c, 0), ssse3 = bit(l1.c, 9);
  if (!(sse2 && sse3 && ssse3)) return t;
  t |= HWY_SSSE3;
  const bool sse4 = bit(l1.c, 19) && bit(l1.c, 20) && bit(l1.c, 1) /*pclmul*/ &&
                    bit(l1.c, 25) /*aes*/ && bit(l1.c, 23) /*popcnt*/;
  if (!sse4) return t;
  t |= HWY_SSE4;
  // AVX needs the OS to save YMM state: OSXSAVE and XCR0 bits 1 (SSE) and 2 (AVX).
  const bool osxsave = bit(l1.c, 27);
  const uint64_t xcr0 = osxsave ? xgetbv0() : 0;
  const bool ymm_os = (xcr0 & 0x6) == 0x6;
  const bool avx2 = ymm_os && bit(l1.c, 28) /*avx*/ && bit(l1.c, 12) /*fma*/ &&
                    bit(l1.c, 29) /*f16c*/ && bit(l7.b, 5) /*avx2*/ && bit(l7.b, 3) /*bmi1*/ &&
                    bit(l7.b, 8) /*bmi2*/ && bit(e1.c, 5) /*lzcnt*/;
  if (!avx2) return t;
  t |= HWY_AVX2;
  // AVX-512 also needs opmask and ZMM state saved: XCR0 bits 5, 6 and 7.
  const bool zmm_os = (xcr0 & 0xE0) == 0xE0;
  const bool avx3 = zmm_os && bit(l7.b, 16) /*f*/ && bit(l7.b, 17) /*dq*/ && bit(l7.b, 28) /*cd*/ &&
                    bit(l7.b, 30) /*bw*/ && bit(l7.b, 31) /*vl*/;
  if (!avx3) return t;
  t |= HWY_AVX3;
  const bool avx3_dl = bit(l7.c, 1) /*vbmi*/ && bit(l7.c, 6) /*vbmi2*/ && bit(l7.c, 9) /*vaes*/ &&
                       bit(l7.c, 10) /*vpclmulqdq*/ && bit(l7.c, 11) /*vnni*/ &&
                       bit(l7.c, 12) /*bitalg*/ && bit(l7.c, 14) /*vpopcntdq*/;
  if (avx3_dl) t |= HWY_AVX3_DL;
  return t;
}
#endif

}  // namespace

int64_t SupportedTargets() {
#if defined(__x86_64__) || defined(__i386__)
  static const int64_t targets = detect_x86();
#else
  // Elsewhere only what the compiler's baseline guarantees (static dispatch quality).
  static const int64_t targets = HWY_ENABLED_BASELINE | HWY_EMU128 | HWY_SCALAR;
#endif
  return targets;
}

ChosenTarget& GetChosenTarget() {
  static ChosenTarget chosen;
  return chosen;
}

}  // namespace hwy
