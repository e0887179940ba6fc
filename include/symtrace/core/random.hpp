#pragma once
/// \file
/// Deterministic random numbers: the same seed gives the same tensors with every standard
/// library (the engine is `std::mt19937_64`, whose output the standard fixes; the distributions
/// are written here rather than taken from `<random>`, whose results vary between libraries).
/// Normal samples go through `std::log`/`std::sin`/`std::cos`, so they may differ in the last
/// bit between C math libraries; uniform samples are exact everywhere.

#include <cstdint>
#include <random>

namespace symtrace {

/// A seeded source of uniform and normal floats.
class Generator {
 public:
  explicit Generator(std::uint64_t seed = 0) : engine_(seed) {}
  /// Restarts the sequence from `seed`.
  void seed(std::uint64_t seed) {
    engine_.seed(seed);
    spare_ = false;
  }
  /// Uniform in [0, 1), 24 random bits.
  float uniform() { return static_cast<float>(engine_() >> 40) * 0x1.0p-24f; }
  /// Uniform in [lo, hi).
  float uniform(float lo, float hi) { return lo + (hi - lo) * uniform(); }
  /// Standard normal (Box-Muller).
  float normal();
  /// 64 random bits.
  std::uint64_t bits() { return engine_(); }

 private:
  std::mt19937_64 engine_;
  float spare_value_ = 0;
  bool spare_ = false;
};

/// This thread's default generator (used by `randn`, `rand` and dropout when none is given).
Generator& default_generator();

/// Reseeds this thread's default generator.
void manual_seed(std::uint64_t seed);

}  // namespace symtrace
