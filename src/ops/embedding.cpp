#include "ops/families.hpp"

namespace symtrace {

void detail::register_embedding_ops(OpRegistry&) {}

}  // namespace symtrace
