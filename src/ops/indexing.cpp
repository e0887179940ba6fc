#include "ops/families.hpp"

namespace symtrace {

void detail::register_indexing_ops(OpRegistry&) {}

}  // namespace symtrace
