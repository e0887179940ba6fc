#include "ops/families.hpp"

namespace symtrace {

void detail::register_normalization_ops(OpRegistry&) {}

}  // namespace symtrace
