#include "ops/families.hpp"

namespace symtrace {

void detail::register_pooling_ops(OpRegistry&) {}

}  // namespace symtrace
