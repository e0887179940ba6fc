#include "symtrace/core/random.hpp"

#include <cmath>
#include <numbers>

namespace symtrace {

float Generator::normal() {
  if (spare_) {
    spare_ = false;
    return spare_value_;
  }
  // Box-Muller on doubles; u1 in (0, 1] so log() is finite.
  const double u1 = (static_cast<double>(engine_() >> 11) + 1.0) * 0x1.0p-53;
  const double u2 = static_cast<double>(engine_() >> 11) * 0x1.0p-53;
  const double r = std::sqrt(-2.0 * std::log(u1));
  const double theta = 2.0 * std::numbers::pi * u2;
  spare_value_ = static_cast<float>(r * std::sin(theta));
  spare_ = true;
  return static_cast<float>(r * std::cos(theta));
}

Generator& default_generator() {
  thread_local Generator generator(0);
  return generator;
}

void manual_seed(std::uint64_t seed) { default_generator().seed(seed); }

}  // namespace symtrace
