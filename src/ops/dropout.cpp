#include "ops/families.hpp"

namespace symtrace {

void detail::register_dropout_ops(OpRegistry&) {}

}  // namespace symtrace
