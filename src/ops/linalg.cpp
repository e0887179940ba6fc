#include "ops/families.hpp"

namespace symtrace {

void detail::register_linalg_ops(OpRegistry&) {}

}  // namespace symtrace
