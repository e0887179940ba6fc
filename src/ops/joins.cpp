#include "ops/families.hpp"

namespace symtrace {

void detail::register_join_ops(OpRegistry&) {}

}  // namespace symtrace
