// Small deterministic random number generators for the trainer and the layer initialisers.
// Written out (not <random> distributions) so that a seed gives the same numbers with every
// standard library: results are reproducible across machines.
#pragma once

#include <cmath>
#include <cstdint>

namespace embedscope {

// SplitMix64 (Steele, Lea, Flood 2014): good 64-bit output from any seed, used to initialise
// weights and to derive per-thread / per-segment seeds.
struct SplitMix64 {
  uint64_t state;
  explicit SplitMix64(uint64_t seed) : state(seed) {}
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // [0, 1) with 53 random bits.
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }
  // Standard normal by Box-Muller (one value per call; the pair's second value is dropped so the
  // stream stays stateless apart from `state`).
  double normal() {
    double u1 = uniform(), u2 = uniform();
    if (u1 < 1e-300) u1 = 1e-300;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
};

// Mixes several integers into one seed.
inline uint64_t mix_seed(uint64_t a, uint64_t b, uint64_t c = 0, uint64_t d = 0) {
  SplitMix64 r(a ^ 0x5851F42D4C957F2Dull);
  uint64_t x = r.next() ^ b;
  SplitMix64 r2(x);
  x = r2.next() ^ c;
  SplitMix64 r3(x);
  x = r3.next() ^ d;
  SplitMix64 r4(x);
  return r4.next();
}

// word2vec.c's linear congruential generator: the cheapest generator that is good enough for
// window sizes, subsampling and negative draws in the inner loop.
struct Lcg {
  uint64_t state;
  explicit Lcg(uint64_t seed) : state(seed) {}
  uint64_t next() {
    state = state * 25214903917ull + 11;
    return state;
  }
};

}  // namespace embedscope
